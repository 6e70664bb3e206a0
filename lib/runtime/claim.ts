import "server-only";
import type { RunAgentInput } from "@ag-ui/core";
import type { Principal } from "@/lib/auth/roles";
import type { AppDb } from "@/lib/db/open";
import { recordAudit } from "@/lib/db/queries/audit";
import {
  attachStagedDecisions,
  getDecisions,
  listPendingDecisions,
  listStagedDecisions,
  resolveDecision,
} from "@/lib/db/queries/decisions";
import { type InvolvedPrincipal, listInvolvedPrincipals } from "@/lib/db/queries/involved";
import { getActiveRun, insertRun } from "@/lib/db/queries/runs";
import { lockThread, setThreadStarter, setThreadStatus } from "@/lib/db/queries/threads";
import type { Decision, Run, Thread } from "@/lib/db/schema";
import { sqlState } from "@/lib/db/sql-client";
import type { Tx } from "@/lib/db/tx";
import { AppError } from "@/lib/errors";
import { type AgentDefinition, getAgent } from "./agent";
import { instanceId } from "./instance";
import type { RunInput } from "./run-input";

/** Longest customer message a run takes (the same bound as a ticket's message). */
const MAX_MESSAGE_CHARS = 5000;

export interface ClaimedRun {
  run: Run;
  /** The thread's last event sequence number before this run: its events follow it. */
  startSeq: number;
}

export interface ClaimRequest {
  threadId: string;
  input: RunAgentInput;
  /** Who is acting: recorded on decisions and runs, checked by the agent's decision policy. */
  principal: Principal;
  leaseMs: number;
}

/** One answer to one interrupt. */
export interface AnswerEntry {
  interruptId: string;
  status: "resolved" | "cancelled";
  payload?: unknown;
}

/**
 * Claim a run for a thread, in one transaction: lock the thread, refuse a second active run, and for a resume check
 * that the answers cover exactly the pending interrupts, validate each against the thread's agent's contract and
 * policy, and move each decision `pending → resolved` by compare-and-set. Any refusal throws an AppError and writes
 * nothing. Who may claim: an intake key only the first run of a ticket it filed; a resume needs an operator.
 * The run, its principal and every decision go into the audit trail in the same transaction.
 */
export async function claimRun(db: AppDb, request: ClaimRequest): Promise<ClaimedRun> {
  const resume = request.input.resume ?? [];
  assertDistinct(resume);
  return inClaimTransaction(db, async (tx) => {
    const thread = await lockThread({ tx, threadId: request.threadId });
    if (!thread) throw new AppError("not_found:thread", `Thread ${request.threadId} does not exist.`);
    if (
      request.principal.kind === "key" &&
      (resume.length > 0 ||
        thread.startedBy ||
        thread.lastSeq > 0 ||
        thread.createdBy !== request.principal.id)
    ) {
      throw new AppError(
        "forbidden:api_key_scope",
        "An intake key may only start the first run of a ticket it filed; decisions need an operator.",
      );
    }
    const pending = await listPendingDecisions({ db: tx, threadId: thread.id });
    if (resume.length === 0) {
      const input = newInput(
        request.input,
        pending,
        thread.lastSeq === 0 ? thread.customerMessage : null,
        thread,
      );
      return startRun(tx, thread, request.principal, request.input.runId, input, request.leaseMs);
    }
    // A resume first settles the decisions, so a request that lost the race hears who decided, not just "busy".
    const known = await knownDecisions(tx, thread, resume);
    const missing = pending.filter((d) => !resume.some((r) => r.interruptId === d.interruptId));
    if (missing.length > 0) {
      throw new AppError(
        "unprocessable:resume_incomplete",
        "The resume must answer every pending interrupt.",
        {
          missing: missing.map((d) => ({ interruptId: d.interruptId, action: d.action })),
        },
      );
    }
    const answers = await settle(tx, thread, known, resume, request.principal, request.input.runId);
    return startRun(tx, thread, request.principal, request.input.runId, answers, request.leaseMs);
  });
}

export interface DecideRequest {
  threadId: string;
  entry: AnswerEntry;
  principal: Principal;
  /** The id of the resume run, should this answer be the last one its super-step waits for. */
  runId: string;
  leaseMs: number;
}

/** A decision taken on its own: either the run resumed with it, or it waits for the other decisions named. */
export type DecideResult =
  | ({ resumed: true } & ClaimedRun)
  | { resumed: false; waitingFor: { interruptId: string; action: string }[] };

/**
 * Take one decision of several pending at once (parallel approvals answered card by card, by different people):
 * validated and checked like any answer, recorded as `answered`, and — once it is the last one its super-step waits
 * for — the resume run is claimed with every staged answer in the same transaction. Two answers to one card: one
 * wins, the other hears who decided. Two answers to two cards at once: both win, the second starts the run.
 */
export async function decideOne(db: AppDb, request: DecideRequest): Promise<DecideResult> {
  if (request.principal.kind === "key") {
    throw new AppError("forbidden:api_key_scope", "An intake key cannot decide; decisions need an operator.");
  }
  return inClaimTransaction(db, async (tx) => {
    const thread = await lockThread({ tx, threadId: request.threadId });
    if (!thread) throw new AppError("not_found:thread", `Thread ${request.threadId} does not exist.`);
    const known = await knownDecisions(tx, thread, [request.entry]);
    const others = (await listPendingDecisions({ db: tx, threadId: thread.id })).filter(
      (d) => d.interruptId !== request.entry.interruptId,
    );
    if (others.length > 0) {
      await settle(tx, thread, known, [request.entry], request.principal, null);
      return {
        resumed: false as const,
        waitingFor: others.map((d) => ({ interruptId: d.interruptId, action: d.action })),
      };
    }
    const answers = await settle(tx, thread, known, [request.entry], request.principal, request.runId);
    const claimed = await startRun(tx, thread, request.principal, request.runId, answers, request.leaseMs);
    return { resumed: true as const, ...claimed };
  });
}

function assertDistinct(resume: readonly { interruptId: string }[]): void {
  const ids = resume.map((r) => r.interruptId);
  if (new Set(ids).size !== ids.length) {
    throw new AppError(
      "bad_request:resume_duplicate",
      "Each interrupt may be answered only once per request.",
    );
  }
}

/** The decisions the entries answer: they must exist, belong to this thread and still be open. */
async function knownDecisions(tx: Tx, thread: Thread, entries: readonly AnswerEntry[]) {
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
async function settle(
  tx: Tx,
  thread: Thread,
  known: Map<string, Decision>,
  entries: readonly AnswerEntry[],
  principal: Principal,
  runId: string | null,
): Promise<RunInput> {
  const agent = getAgent(thread.agentId);
  const staged = await listStagedDecisions({ db: tx, threadId: thread.id });
  const answers = validateAll(agent, known, entries);
  await applyPolicy(tx, agent, thread, known, entries, answers, principal, staged);
  for (const entry of entries) {
    const won = await resolveDecision({
      db: tx,
      interruptId: entry.interruptId,
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
  if (runId) await attachStagedDecisions({ db: tx, threadId: thread.id, resumeRunId: runId });
  await recordAudit({
    db: tx,
    entries: entries.map((entry) => {
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
    }),
  });
  return {
    kind: "resume",
    actor: principal.label,
    resume: [
      ...staged.map((d) => ({
        interruptId: d.interruptId,
        status: (d.resumeStatus === "cancelled" ? "cancelled" : "resolved") as AnswerEntry["status"],
        payload: d.resumeStatus === "cancelled" ? undefined : d.answer,
      })),
      ...entries.map((r) => ({
        interruptId: r.interruptId,
        status: r.status,
        payload: r.status === "resolved" ? answers.get(r.interruptId) : undefined,
      })),
    ],
  };
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
): Promise<void> {
  let involved: InvolvedPrincipal[] | null = null;
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
    if (agent.actsOnIt(parsed.payload, answer)) involved ??= await listInvolvedPrincipals({ db: tx, thread });
    agent.policy({
      interruptId: entry.interruptId,
      payload: parsed.payload,
      answer,
      principal,
      involved: involved ?? [],
      siblings,
    });
    // Answers of the same request count as siblings of the next one (one person approving two reviews at once).
    siblings.push({
      interruptId: entry.interruptId,
      action: parsed.action,
      answer,
      resolvedById: principal.id,
    });
  }
}

/** Insert the run (one active per thread), mark the thread running, record its principal and audit the start. */
async function startRun(
  tx: Tx,
  thread: Thread,
  principal: Principal,
  runId: string,
  input: RunInput,
  leaseMs: number,
): Promise<ClaimedRun> {
  const active = await getActiveRun({ db: tx, threadId: thread.id });
  if (active) {
    throw new AppError("conflict:run_active", "A run is already in progress on this thread.", {
      runId: active.id,
    });
  }
  const run = await insertRun({
    db: tx,
    run: {
      id: runId,
      threadId: thread.id,
      kind: input.kind,
      input,
      fromCheckpointId: null,
      owner: instanceId(),
      startedBy: principal.id,
      startedByLabel: principal.label,
      leaseMs,
    },
  });
  await setThreadStatus({ db: tx, threadId: thread.id, status: "running" });
  if (input.kind === "input" && !thread.startedBy) {
    await setThreadStarter({ db: tx, threadId: thread.id, startedBy: principal.id });
  }
  await recordAudit({
    db: tx,
    entries: [
      {
        action: "run_started",
        actor: principal,
        threadId: thread.id,
        detail: {
          runId: run.id,
          kind: input.kind,
          ...(input.kind === "input" ? { message: input.text } : {}),
        },
      },
    ],
  });
  return { run, startSeq: thread.lastSeq };
}

function newInput(
  input: RunAgentInput,
  pending: Decision[],
  ticketMessage: string | null,
  thread: Thread,
): RunInput {
  if (pending.length > 0) {
    throw new AppError(
      "conflict:interrupt_pending",
      "The thread is waiting for a decision; answer it with `resume` before sending new input.",
      { interrupts: pending.map((d) => ({ interruptId: d.interruptId, action: d.action })) },
    );
  }
  const lastUser = [...input.messages].reverse().find((m) => m.role === "user");
  if (lastUser) {
    const text = typeof lastUser.content === "string" ? lastUser.content : contentText(lastUser.content);
    if (!text.trim()) throw new AppError("unprocessable:empty_message", "The user message is empty.");
    if (text.length > MAX_MESSAGE_CHARS) {
      throw new AppError(
        "unprocessable:message_too_long",
        `The message is longer than ${MAX_MESSAGE_CHARS} characters.`,
        { fields: ["messages"], limit: MAX_MESSAGE_CHARS },
      );
    }
    return { kind: "input", messageId: lastUser.id, text };
  }
  if (ticketMessage) return { kind: "input", messageId: `ticket-${input.runId}`, text: ticketMessage };
  // No message on a thread whose last run failed: try again from where it stopped.
  if (thread.status === "failed") return { kind: "retry" };
  throw new AppError("unprocessable:no_message", "A new run needs a user message.");
}

function contentText(content: unknown): string {
  if (!Array.isArray(content)) return "";
  return content
    .map((p) => (p && typeof p === "object" && "text" in p && typeof p.text === "string" ? p.text : ""))
    .join("");
}

function alreadyDecided(decision: Decision): AppError {
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

/** Run a claim transaction; constraint violations raised by a concurrent request become the same 409s as the checks. */
async function inClaimTransaction<T>(db: AppDb, work: (tx: Tx) => Promise<T>): Promise<T> {
  try {
    return await db.transaction(work);
  } catch (error) {
    throw mapConstraintError(error);
  }
}

function mapConstraintError(error: unknown): unknown {
  if (error instanceof AppError) return error;
  const cause = (error as { cause?: unknown })?.cause ?? error;
  const constraint = (cause as { constraint?: string })?.constraint ?? "";
  if (sqlState(cause) === "23505" && constraint === "runs_one_active_per_thread") {
    return new AppError("conflict:run_active", "A run is already in progress on this thread.");
  }
  if (sqlState(cause) === "23505" && constraint === "runs_pkey") {
    return new AppError("conflict:run_id", "A run with this runId already exists.");
  }
  if (sqlState(cause) === "40P01" || sqlState(cause) === "40001") {
    return new AppError("conflict:retry", "The request collided with another one; try again.");
  }
  return error;
}
