import "server-only";
import { AppError } from "@/lib/contract/errors";
import type { Principal } from "@/lib/contract/roles";
import type { Authorization } from "@/lib/contract/wire";
import { type AuditInput, recordAudit } from "@/lib/db/queries/audit";
import {
  attachStagedDecisions,
  getDecisions,
  listResolvedDecisions,
  listStagedDecisions,
  resolveDecision,
} from "@/lib/db/queries/decisions";
import { type InvolvedPrincipal, listInvolvedPrincipals } from "@/lib/db/queries/involved";
import { insertReceipts } from "@/lib/db/queries/receipts";
import type { Decision, Thread } from "@/lib/db/schema";
import type { Tx } from "@/lib/db/tx";
import { type DecisionChannel, decisionReceipts, type NewReceipt } from "../../delivery/receipts";
import { amountAuthorized, refuseOverAuthority } from "../agents/authority";
import { type AgentDefinition, type DecisionAttempt, decidingAgent } from "../agents/registry";
import { refuseSystemActing } from "../agents/system-policy";
import type { RunInput } from "./run-input";

/*
 * Settling decisions inside a claim transaction: which decisions the answers name, whether each answer fits the
 * agent's contract and passes its decision policy, and the compare-and-set that records it in the ledger.
 */

/** One answer to one interrupt. */
export interface AnswerEntry {
  interruptId: string;
  status: "resolved" | "cancelled";
  payload?: unknown;
}

/** The decisions the entries answer: they must exist, belong to this thread and still be open. */
export async function knownDecisions(
  tx: Tx,
  thread: Thread,
  entries: readonly AnswerEntry[],
  /** The thread's pending decisions, when the caller read them already: answers to those need no read of their own. */
  pending?: readonly Decision[],
) {
  // Every answer names a decision of this thread still pending: exactly what the checks below would establish.
  const open = new Map((pending ?? []).map((d) => [d.interruptId, d]));
  if (pending && entries.every((e) => open.has(e.interruptId))) {
    return new Map(entries.map((e) => [e.interruptId, open.get(e.interruptId) as Decision]));
  }
  const known = new Map(
    (await getDecisions({ db: tx, interruptIds: entries.map((r) => r.interruptId) })).map((d) => [
      d.interruptId,
      d,
    ]),
  );
  for (const entry of entries) {
    const decision = known.get(entry.interruptId);
    if (!decision)
      throw new AppError("not_found:interrupt", `Interrupt ${entry.interruptId} does not exist.`);
    if (decision.threadId !== thread.id) {
      throw new AppError(
        "unprocessable:interrupt_thread",
        `Interrupt ${entry.interruptId} belongs to another thread.`,
      );
    }
    if (decision.status !== "pending") throw alreadyDecided(decision);
  }
  return known;
}

/**
 * Validate the answers against the agent's contract, apply its decision policy, then compare-and-set each decision
 * (`resolved` with `runId`, or `answered` while others are pending) and audit them. With a run, answers staged
 * earlier are attached to it too, and the whole set is returned as the run's resume input.
 */
export async function settle(
  tx: Tx,
  thread: Thread,
  known: Map<string, Decision>,
  entries: readonly AnswerEntry[],
  principal: Principal,
  runId: string | null,
  options: {
    /** The thread's staged answers, when the caller read them already (under the thread's lock). */
    staged?: Decision[];
    /** Collect the audit entries here instead of writing them: the caller writes them with its own, in one insert. */
    audit?: AuditInput[];
    /** Who was involved in the thread, when the caller read it already (with its open decisions, under the lock). */
    involved?: InvolvedPrincipal[];
    /** How the answers came (for their receipts); default: a person's decision, or the system principal's kind. */
    channel?: DecisionChannel;
    /** The decisions the thread has taken, when the caller read them already (with who was involved). */
    decided?: DecisionAttempt<unknown>["decided"];
    /** Collect the receipts here instead of writing them: the caller writes them with its run, in one statement. */
    receipts?: NewReceipt[];
  } = {},
): Promise<RunInput> {
  // The version the thread is pinned to, or the current one during a rolling upgrade (409 conflict:graph_version
  // when the version is retired or refused).
  const agent = decidingAgent(thread);
  const staged = options.staged ?? (await listStagedDecisions({ db: tx, threadId: thread.id }));
  const answers = validateAll(agent, known, entries);
  await applyPolicy(
    tx,
    agent,
    thread,
    known,
    entries,
    answers,
    principal,
    staged,
    options.involved,
    options.decided,
  );
  // Who may answer is settled; whether the answer is still possible is the ledgers' now.
  await checkAgainstNow(tx, agent, known, entries);
  for (const entry of entries) {
    const won = await resolveDecision({
      db: tx,
      interruptId: entry.interruptId,
      threadId: thread.id,
      resumeStatus: entry.status,
      answer: entry.status === "resolved" ? (answers.get(entry.interruptId) ?? null) : null,
      resolvedBy: principal.label,
      resolvedById: principal.id,
      resolverRole: principal.role,
      resumeRunId: runId,
    });
    if (!won) {
      const [now] = await getDecisions({ db: tx, interruptIds: [entry.interruptId] });
      throw now
        ? alreadyDecided(now)
        : new AppError("conflict:interrupt_resolved", "The decision was already taken.");
    }
  }
  // Each decision's receipt: what was shown, what was answered, who, how, and what it authorizes.
  const receipts = receiptsOf(agent, thread, known, entries, answers, principal, options.channel);
  if (options.receipts) options.receipts.push(...receipts);
  else await insertReceipts({ db: tx, receipts });
  // Nothing staged (read under the thread's lock, which every answer takes): nothing to attach.
  if (runId && staged.length > 0)
    await attachStagedDecisions({ db: tx, threadId: thread.id, resumeRunId: runId });
  const audit = decisionAudit(thread, known, entries, answers, principal, runId);
  if (options.audit) options.audit.push(...audit);
  else await recordAudit({ db: tx, entries: audit });
  const now = new Date().toISOString();
  return {
    kind: "resume",
    actor: principal.label,
    resume: [
      ...staged.map((d) => ({
        interruptId: d.interruptId,
        status: (d.resumeStatus === "cancelled" ? "cancelled" : "resolved") as AnswerEntry["status"],
        payload: d.resumeStatus === "cancelled" ? undefined : d.answer,
        ...(d.resolvedBy ? { by: d.resolvedBy } : {}),
        ...(d.resolvedAt ? { at: new Date(d.resolvedAt).toISOString() } : {}),
      })),
      ...entries.map((r) => ({
        interruptId: r.interruptId,
        status: r.status,
        payload: r.status === "resolved" ? answers.get(r.interruptId) : undefined,
        by: principal.label,
        at: now,
      })),
    ],
  };
}

/** The decisions' receipts (lib/delivery/receipts.ts): what each decider was shown and answered, and what it allows. */
function receiptsOf(
  agent: AgentDefinition,
  thread: Thread,
  known: Map<string, Decision>,
  entries: readonly AnswerEntry[],
  answers: Map<string, unknown>,
  principal: Principal,
  channel: DecisionChannel | undefined,
): NewReceipt[] {
  return decisionReceipts({
    principal,
    channel: channel ?? channelOf(principal),
    policy: `${thread.agentId}@${thread.agentVersion}`,
    decisions: entries.map((entry) => {
      const decision = known.get(entry.interruptId);
      const answer = entry.status === "resolved" ? (answers.get(entry.interruptId) ?? null) : null;
      const parsed = agent.interrupts.parse(decision?.payload);
      return {
        interruptId: entry.interruptId,
        threadId: thread.id,
        action: decision?.action ?? "unknown",
        payload: decision?.payload ?? null,
        status: entry.status,
        answer,
        authorizes:
          entry.status === "resolved" && parsed.ok ? authorizationsOf(agent, parsed.payload, answer) : [],
      };
    }),
  });
}

/** The decisions' audit entries: the payload shown, the answer taken (or the cancellation), the run it resumes. */
function decisionAudit(
  thread: Thread,
  known: Map<string, Decision>,
  entries: readonly AnswerEntry[],
  answers: Map<string, unknown>,
  principal: Principal,
  runId: string | null,
): AuditInput[] {
  return entries.map((entry) => {
    const decision = known.get(entry.interruptId);
    return {
      action: "decision" as const,
      actor: principal,
      threadId: thread.id,
      checkpointId: decision?.checkpointId ?? null,
      interruptId: entry.interruptId,
      payload: decision?.payload ?? null,
      answer: entry.status === "resolved" ? (answers.get(entry.interruptId) ?? null) : { cancelled: true },
      detail: { action: decision?.action ?? null, runId, ...(runId ? {} : { waiting: true }) },
    };
  });
}

/** What an answer authorizes: what its contract says (refund, account change, voucher), and the agent's own. */
export function authorizationsOf(agent: AgentDefinition, payload: unknown, answer: unknown): Authorization[] {
  return [
    ...(agent.interrupts.authorizes?.(payload, answer) ?? []),
    ...(agent.authorizes?.(payload, answer) ?? []),
  ];
}

/** The channel of a decision nobody named one for: a person's, or the system principal's own. */
function channelOf(principal: Principal): DecisionChannel {
  if (principal.kind !== "system") return "decision";
  if (principal.id === "system:timer") return "timer";
  if (principal.id === "system:expiry") return "expiry";
  return "system";
}

/** The answers as the agent's contract parsed them (unknown fields never reach the ledger), or 422 naming one. */
function validateAll(
  agent: AgentDefinition,
  known: Map<string, Decision>,
  entries: readonly AnswerEntry[],
): Map<string, unknown> {
  const answers = new Map<string, unknown>();
  for (const entry of entries) {
    if (entry.status !== "resolved") continue;
    const parsed = agent.interrupts.parse(known.get(entry.interruptId)?.payload);
    if (!parsed.ok) {
      // A payload outside the contract takes any JSON answer (bounded by the body limit); the graph validates it.
      answers.set(entry.interruptId, entry.payload ?? null);
      continue;
    }
    const check = agent.interrupts.validate(parsed.payload, entry.payload);
    if (!check.ok) {
      throw new AppError(
        "unprocessable:answer",
        `The answer to ${parsed.action} is not valid: ${check.error}`,
        {
          interruptId: entry.interruptId,
          action: parsed.action,
        },
      );
    }
    answers.set(entry.interruptId, check.answer);
  }
  return answers;
}

/**
 * Each answer against the question as the ledgers say it now (`interrupts.current`: what is left to refund after other
 * refunds of the order since it was asked), or 422: the answer was possible when asked and is no longer.
 */
async function checkAgainstNow(
  tx: Tx,
  agent: AgentDefinition,
  known: Map<string, Decision>,
  entries: readonly AnswerEntry[],
): Promise<void> {
  const current = agent.interrupts.current;
  if (!current) return;
  for (const entry of entries) {
    if (entry.status !== "resolved") continue;
    const parsed = agent.interrupts.parse(known.get(entry.interruptId)?.payload);
    if (!parsed.ok) continue;
    const now = await current({ db: tx, payload: parsed.payload });
    if (now === parsed.payload) continue;
    const check = agent.interrupts.validate(now, entry.payload);
    if (!check.ok) {
      throw new AppError(
        "unprocessable:answer",
        `The answer to ${parsed.action} is no longer possible: ${check.error}`,
        { interruptId: entry.interruptId, action: parsed.action },
      );
    }
  }
}

/** The agent's decision policy for every answer that acts on the world (four-eyes and the like). */
async function applyPolicy(
  tx: Tx,
  agent: AgentDefinition,
  thread: Thread,
  known: Map<string, Decision>,
  entries: readonly AnswerEntry[],
  answers: Map<string, unknown>,
  principal: Principal,
  staged: Decision[],
  read?: InvolvedPrincipal[],
  readDecided?: DecisionAttempt<unknown>["decided"],
): Promise<void> {
  let involved: InvolvedPrincipal[] | null = read ?? null;
  let decided: DecisionAttempt<unknown>["decided"] | null = readDecided ?? null;
  let earlierCents = 0;
  const siblings = staged.map((d) => ({
    interruptId: d.interruptId,
    action: d.action,
    answer: d.answer,
    resolvedById: d.resolvedById,
  }));
  for (const entry of entries) {
    if (entry.status !== "resolved") continue;
    const parsed = agent.interrupts.parse(known.get(entry.interruptId)?.payload);
    if (!parsed.ok) continue;
    const answer = answers.get(entry.interruptId);
    refuseSystemActing({ agent, principal, payload: parsed.payload, action: parsed.action, answer });
    const acts = agent.actsOnIt(parsed.payload, answer);
    if (acts) {
      involved ??= await listInvolvedPrincipals({ db: tx, thread });
      decided ??= (await listResolvedDecisions({ db: tx, threadId: thread.id })).map(decidedOf);
    }
    agent.policy({
      interruptId: entry.interruptId,
      payload: parsed.payload,
      answer,
      principal,
      involved: involved ?? [],
      siblings,
      decided: acts ? (decided ?? []) : [],
    });
    // Delegated authority: the money this answer lets leave, within the decider's limits (and their teams').
    if (acts) {
      const amountCents = amountAuthorized(authorizationsOf(agent, parsed.payload, answer));
      await refuseOverAuthority({
        db: tx,
        principal,
        agentId: agent.id,
        action: parsed.action,
        amountCents,
        earlierCents,
        currency: currencyOf(parsed.payload),
        customer: thread.subjectId,
        lock: true,
      });
      earlierCents += amountCents;
    }
    // Answers of the same request count as siblings of the next one (one person approving two reviews at once).
    siblings.push({
      interruptId: entry.interruptId,
      action: parsed.action,
      answer,
      resolvedById: principal.id,
    });
  }
}

/** The currency a question's payload names (a refund's request), for a refusal's words. */
export function currencyOf(payload: unknown): string | null {
  const p = payload as { currency?: unknown; requested?: { currency?: unknown } } | null;
  const currency = p?.currency ?? p?.requested?.currency;
  return typeof currency === "string" ? currency : null;
}

/** A taken decision as a policy sees it. */
export function decidedOf(d: Decision): DecisionAttempt<unknown>["decided"][number] {
  return { interruptId: d.interruptId, action: d.action, answer: d.answer, resolvedById: d.resolvedById };
}

export function alreadyDecided(decision: Decision): AppError {
  if (decision.status === "superseded") {
    return new AppError(
      "conflict:interrupt_superseded",
      "This decision no longer applies: the thread moved on.",
      {
        interruptId: decision.interruptId,
      },
    );
  }
  return new AppError(
    "conflict:interrupt_resolved",
    `${decision.resolvedBy ?? "Someone"} already decided this${decision.resolvedAt ? ` at ${decision.resolvedAt.toISOString()}` : ""}.`,
    {
      interruptId: decision.interruptId,
      resolvedBy: decision.resolvedBy,
      resolvedAt: decision.resolvedAt?.toISOString() ?? null,
      answer: decision.answer,
    },
  );
}
