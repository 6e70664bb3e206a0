import "server-only";
import type { RunAgentInput } from "@ag-ui/core";
import { hasRole, type Principal } from "@/lib/auth/roles";
import type { AppDb } from "@/lib/db/open";
import { recordAudit } from "@/lib/db/queries/audit";
import { getDecisions, listPendingDecisions, resolveDecision } from "@/lib/db/queries/decisions";
import { type InvolvedPrincipal, listInvolvedPrincipals } from "@/lib/db/queries/involved";
import { getActiveRun, insertRun } from "@/lib/db/queries/runs";
import { lockThread, setThreadStarter, setThreadStatus } from "@/lib/db/queries/threads";
import type { Decision, Run, Thread } from "@/lib/db/schema";
import { sqlState } from "@/lib/db/sql-client";
import type { Tx } from "@/lib/db/tx";
import { env } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { type InterruptPayload, parseInterruptPayload, validateAnswer } from "@/lib/interrupts";
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
  /** Who is acting: recorded on decisions, checked by the four-eyes rules. */
  principal: Principal;
  leaseMs: number;
}

/**
 * Claim a run for a thread, in one transaction: lock the thread, refuse a second active run, and for a resume check
 * that the answers cover exactly the pending interrupts, validate each answer against its interrupt's contract and
 * move each decision `pending → resolved` by compare-and-set. Any refusal throws an AppError and writes nothing.
 *
 * Who may claim: an intake key only the first run of a ticket; a resume needs an operator, and a refund approval
 * passes the four-eyes rules (`checkFourEyes`). Decisions go into the audit trail in the same transaction.
 */
export async function claimRun(db: AppDb, request: ClaimRequest): Promise<ClaimedRun> {
  const resume = request.input.resume ?? [];
  const ids = resume.map((r) => r.interruptId);
  if (new Set(ids).size !== ids.length) {
    throw new AppError(
      "bad_request:resume_duplicate",
      "Each interrupt may be answered only once per request.",
    );
  }
  try {
    return await db.transaction(async (tx) => {
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
      // A resume first settles the decisions, so a request that lost the race hears who decided, not just "busy".
      const runInput =
        resume.length > 0
          ? await resolveAll(tx, request, pending, thread)
          : newInput(
              request.input,
              pending,
              thread.lastSeq === 0 ? thread.customerMessage : null,
              thread.status,
            );
      const active = await getActiveRun({ db: tx, threadId: thread.id });
      if (active) {
        throw new AppError("conflict:run_active", "A run is already in progress on this thread.", {
          runId: active.id,
        });
      }
      const run = await insertRun({
        db: tx,
        run: {
          id: request.input.runId,
          threadId: thread.id,
          kind: runInput.kind,
          input: runInput,
          fromCheckpointId: null,
          owner: instanceId(),
          startedBy: request.principal.id,
          startedByLabel: request.principal.label,
          leaseMs: request.leaseMs,
        },
      });
      await setThreadStatus({ db: tx, threadId: thread.id, status: "running" });
      if (runInput.kind === "input" && !thread.startedBy) {
        await setThreadStarter({ db: tx, threadId: thread.id, startedBy: request.principal.id });
      }
      await recordAudit({
        db: tx,
        entries: [
          {
            action: "run_started",
            actor: request.principal,
            threadId: thread.id,
            detail: {
              runId: run.id,
              kind: runInput.kind,
              ...(runInput.kind === "input" ? { message: runInput.text } : {}),
            },
          },
        ],
      });
      return { run, startSeq: thread.lastSeq };
    });
  } catch (error) {
    throw mapConstraintError(error);
  }
}

function newInput(
  input: RunAgentInput,
  pending: Decision[],
  ticketMessage: string | null,
  threadStatus: string,
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
  if (threadStatus === "failed") return { kind: "retry" };
  throw new AppError("unprocessable:no_message", "A new run needs a user message.");
}

function contentText(content: unknown): string {
  if (!Array.isArray(content)) return "";
  return content
    .map((p) => (p && typeof p === "object" && "text" in p && typeof p.text === "string" ? p.text : ""))
    .join("");
}

async function resolveAll(
  tx: Tx,
  request: ClaimRequest,
  pending: Decision[],
  thread: Thread,
): Promise<RunInput> {
  const resume = request.input.resume ?? [];
  const known = new Map(
    (await getDecisions({ db: tx, interruptIds: resume.map((r) => r.interruptId) })).map((d) => [
      d.interruptId,
      d,
    ]),
  );
  for (const entry of resume) {
    const decision = known.get(entry.interruptId);
    if (!decision)
      throw new AppError("not_found:interrupt", `Interrupt ${entry.interruptId} does not exist.`);
    if (decision.threadId !== request.threadId) {
      throw new AppError(
        "unprocessable:interrupt_thread",
        `Interrupt ${entry.interruptId} belongs to another thread.`,
      );
    }
    if (decision.status !== "pending") throw alreadyDecided(decision);
  }
  const missing = pending.filter((d) => !resume.some((r) => r.interruptId === d.interruptId));
  if (missing.length > 0) {
    throw new AppError("unprocessable:resume_incomplete", "The resume must answer every pending interrupt.", {
      missing: missing.map((d) => ({ interruptId: d.interruptId, action: d.action })),
    });
  }
  // What is stored and acted on is the answer as the contract parsed it: unknown fields never reach the ledger.
  const answers = new Map<string, unknown>();
  for (const entry of resume) {
    if (entry.status !== "resolved") continue;
    const parsed = parseInterruptPayload(known.get(entry.interruptId)?.payload);
    if (!parsed.ok) {
      // payloads outside the contract take any JSON answer (bounded by the body limit); the graph validates its own
      answers.set(entry.interruptId, entry.payload ?? null);
      continue;
    }
    const check = validateAnswer(parsed.payload, entry.payload);
    if (!check.ok) {
      throw new AppError(
        "unprocessable:answer",
        `The answer to ${parsed.payload.action} is not valid: ${check.error}`,
        {
          interruptId: entry.interruptId,
          action: parsed.payload.action,
        },
      );
    }
    answers.set(entry.interruptId, check.answer);
  }
  const { principal } = request;
  const needsFourEyes = resume.some((entry) => {
    const parsed = parseInterruptPayload(known.get(entry.interruptId)?.payload);
    return (
      entry.status === "resolved" && parsed.ok && actsOnIt(parsed.payload, answers.get(entry.interruptId))
    );
  });
  if (needsFourEyes) {
    const involved = await listInvolvedPrincipals({ db: tx, thread });
    for (const entry of resume) {
      const parsed = parseInterruptPayload(known.get(entry.interruptId)?.payload);
      if (entry.status === "resolved" && parsed.ok)
        checkFourEyes(parsed.payload, answers.get(entry.interruptId), principal, involved);
    }
  }
  for (const entry of resume) {
    const won = await resolveDecision({
      db: tx,
      interruptId: entry.interruptId,
      resumeStatus: entry.status,
      answer: entry.status === "resolved" ? (answers.get(entry.interruptId) ?? null) : null,
      resolvedBy: principal.label,
      resolvedById: principal.id,
      resolverRole: principal.role,
      resumeRunId: request.input.runId,
    });
    if (!won) {
      const [now] = await getDecisions({ db: tx, interruptIds: [entry.interruptId] });
      throw now
        ? alreadyDecided(now)
        : new AppError("conflict:interrupt_resolved", "The decision was already taken.");
    }
  }
  await recordAudit({
    db: tx,
    entries: resume.map((entry) => {
      const decision = known.get(entry.interruptId);
      return {
        action: "decision" as const,
        actor: principal,
        threadId: request.threadId,
        checkpointId: decision?.checkpointId ?? null,
        interruptId: entry.interruptId,
        payload: decision?.payload ?? null,
        answer: entry.status === "resolved" ? (answers.get(entry.interruptId) ?? null) : { cancelled: true },
        detail: { action: decision?.action ?? null, runId: request.input.runId },
      };
    }),
  });
  return {
    kind: "resume",
    actor: principal.label,
    resume: resume.map((r) => ({
      interruptId: r.interruptId,
      status: r.status,
      payload: r.status === "resolved" ? answers.get(r.interruptId) : undefined,
    })),
  };
}

/** Whether an answer makes something happen to the customer: approves money (in full or in part) or sends mail. */
function actsOnIt(payload: InterruptPayload, answer: unknown): boolean {
  if (payload.action === "refund_approval") {
    const decision = (answer as { decision?: unknown } | null)?.decision;
    return decision === "approve" || decision === "approve_partial";
  }
  if (payload.action === "confirm_email")
    return (answer as { choice?: unknown } | null)?.choice !== "dont_send";
  return false;
}

/**
 * Four-eyes. Approving a refund (in full or in part) is refused to anyone who supplied input that led to the request
 * (`listInvolvedPrincipals`: who filed the ticket, started a run since the thread's previous decision, answered a
 * free-text question on the way, or edited the thread's state), and a refund request above FOUR_EYES_MIN_CENTS needs
 * a supervisor. Sending the customer an email is refused to whoever edited the thread's state (the draft was written
 * from their edit). Rejecting and not sending are anyone's with the operator role.
 */
export function checkFourEyes(
  payload: InterruptPayload,
  answer: unknown,
  principal: Principal,
  involved: InvolvedPrincipal[],
): void {
  if (!actsOnIt(payload, answer)) return;
  const own = involved.find((p) => p.id === principal.id);
  if (payload.action === "confirm_email") {
    if (own?.kind === "editor") {
      throw new AppError("forbidden:four_eyes_edited", `You ${own.why}: someone else must send its reply.`, {
        rule: "not_own_edit",
        because: own.why,
      });
    }
    return;
  }
  if (payload.action !== "refund_approval") return;
  if (own) {
    throw new AppError(
      "forbidden:four_eyes_own_thread",
      `You ${own.why}: someone else must approve its refund.`,
      {
        rule: "not_own_thread",
        because: own.why,
      },
    );
  }
  if (payload.requested.amountCents > env.FOUR_EYES_MIN_CENTS && !hasRole(principal.role, "supervisor")) {
    throw new AppError(
      "forbidden:four_eyes_supervisor",
      `Refunds above ${(env.FOUR_EYES_MIN_CENTS / 100).toFixed(2)} ${payload.requested.currency} need a supervisor to approve them.`,
      { rule: "supervisor_required", thresholdCents: env.FOUR_EYES_MIN_CENTS },
    );
  }
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

/** Constraint violations raised by a concurrent request become the same 409s the checks above give. */
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
