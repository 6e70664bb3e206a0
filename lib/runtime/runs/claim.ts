import "server-only";
import type { RunAgentInput } from "@ag-ui/core";
import { AppError } from "@/lib/contract/errors";
import type { Principal } from "@/lib/contract/roles";
import type { Database } from "@/lib/db/open";
import { type AuditInput, auditInsert, recordAudit } from "@/lib/db/queries/audit";
import { listOpenDecisions } from "@/lib/db/queries/decisions";
import { enqueueInput, getQueuedInput, listWaitingInputs } from "@/lib/db/queries/queued-inputs";
import { receiptInserts } from "@/lib/db/queries/receipts";
import { getActiveRun, getRun, insertRun, requestRunCancel } from "@/lib/db/queries/runs";
import { lockThread, threadStatusUpdate } from "@/lib/db/queries/threads";
import type { Decision, QueuedInput, Run, Thread } from "@/lib/db/schema";
import type { Tx } from "@/lib/db/tx";
import { activeRunTrace } from "@/lib/platform/observability/tracing";
import type { NewReceipt } from "../../delivery/receipts";
import { instanceId } from "../../platform/instance";
import { findAgent, multitaskOf, threadAgent } from "../agents/registry";
import { parseRunStartRead, runStartRead, type StartRead } from "./budget";
import { assertQueueRoom } from "./queue-bounds";
import type { RunInput } from "./run-input";
import { type AnswerEntry, knownDecisions, settle } from "./settle";

export type { AnswerEntry };

import {
  answerableAsRecorded,
  claimAfterPreflight,
  PREFLIGHT_FIRST,
  versionIsNewer,
} from "./claim-transaction";

/** Longest customer message a run takes (the same bound as a ticket's message). */
const MAX_MESSAGE_CHARS = 5000;

export interface ClaimedRun {
  run: Run;
  /** The thread's last event sequence number before this run: its events follow it. */
  startSeq: number;
  /** What the run's start needs of its thread, read by the statement that inserted the run (see `runStartRead`). */
  startRead?: StartRead;
}

/** New input kept for after the thread's active run (the agent's multitask strategy): it starts as run `queued.id`. */
export interface QueuedClaim {
  queued: QueuedInput;
  /** Its place in the thread's queue, from 1. */
  position: number;
  startSeq: number;
  /** The run asked to stop for it (`interrupt` / `rollback`), if any. */
  stopping: string | null;
}

export interface ClaimRequest {
  threadId: string;
  input: RunAgentInput;
  /** Who is acting: recorded on decisions and runs, checked by the agent's decision policy. */
  principal: Principal;
  leaseMs: number;
}

/**
 * Claim a run for a thread, in one transaction: lock the thread, refuse a second active run, and for a resume check
 * that the answers cover exactly the pending interrupts, validate each against the thread's agent's contract and
 * policy, and move each decision `pending → resolved` by compare-and-set. Any refusal throws an AppError and writes
 * nothing. Who may claim: an intake key only the first run of a ticket it filed; a resume needs an operator.
 * The run, its principal and every decision go into the audit trail in the same transaction.
 */
export async function claimRun({
  database,
  ...request
}: ClaimRequest & { database: Database }): Promise<ClaimedRun | QueuedClaim> {
  const resume = request.input.resume ?? [];
  assertDistinct(resume);
  const answered = resume.map((r) => r.interruptId);
  return claimAfterPreflight(
    database,
    request.threadId,
    request.input.runId,
    answered,
    async (tx, observer, checked) => {
      const thread = await lockThread({ tx, threadId: request.threadId });
      if (!thread) throw new AppError("not_found:thread", `Thread ${request.threadId} does not exist.`);
      if (resume.length > 0 && !checked && !answerableAsRecorded(thread)) return PREFLIGHT_FIRST;
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
      // A thread no run was ever claimed for (`idle`: every claim marks its thread running, and nothing sets `idle`
      // again) has no decision and no queued input: neither is read.
      const neverRan = thread.status === "idle";
      if (resume.length === 0 && !neverRan) {
        const queued = await queueIfBusy(tx, thread, request.principal, request.input);
        if (queued) return queued;
      }
      // A resume's policy may ask who was involved in the thread (four-eyes): read with the open decisions.
      const { pending, staged, involved, decided } = neverRan
        ? { pending: [], staged: [], involved: undefined, decided: undefined }
        : await listOpenDecisions({
            db: tx,
            threadId: thread.id,
            ...(resume.length > 0 ? { involvedOf: thread } : {}),
          });
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
      const known = await knownDecisions(tx, thread, resume, pending);
      const missing = pending.filter((d) => !resume.some((r) => r.interruptId === d.interruptId));
      if (missing.length > 0) {
        throw new AppError(
          "unprocessable:resume_incomplete",
          "Every decision the thread is waiting for must be answered together; some were left out.",
          {
            missing: missing.map((d) => ({ interruptId: d.interruptId, action: d.action })),
          },
        );
      }
      const audit: AuditInput[] = [];
      const receipts: NewReceipt[] = [];
      const answers = await settle(tx, thread, known, resume, request.principal, request.input.runId, {
        staged,
        audit,
        receipts,
        channel: "agui",
        ...(involved ? { involved } : {}),
        ...(decided ? { decided } : {}),
      });
      observer.settled(known, resume);
      return startRun(tx, thread, request.principal, request.input.runId, answers, request.leaseMs, {
        audit,
        receipts,
      });
    },
  );
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

/**
 * Insert the run (one active per thread), mark the thread running, record its principal and audit the start.
 * `known.active`: the thread's active run as the caller read it under the thread's lock (not read again);
 * `known.audit`: the caller's own audit entries, written in the same insert, before the start's.
 */
export async function startRun(
  tx: Tx,
  thread: Thread,
  principal: Principal,
  runId: string,
  input: RunInput,
  leaseMs: number,
  known: { active?: Run | null; audit?: AuditInput[]; receipts?: NewReceipt[] } = {},
): Promise<ClaimedRun> {
  const active =
    known.active !== undefined
      ? known.active
      : idleByStatus(thread)
        ? null
        : await getActiveRun({ db: tx, threadId: thread.id });
  if (active) {
    throw new AppError("conflict:run_active", "A run is already in progress on this thread.", {
      runId: active.id,
    });
  }
  // A thread runs on its pinned version. A version this process does not have yet (a newer instance made it, in a
  // rolling upgrade) is left queued for an instance that has it; a retired one is refused (`threadAgent`).
  const queued = !findAgent(thread.agentId, thread.agentVersion) && versionIsNewer(thread);
  if (!queued) threadAgent(thread);
  // The run, the thread's status and the audit rows in one statement, which also returns what the run's start reads.
  const readOptions = {
    threadId: thread.id,
    runId,
    asked: input.kind === "resume",
    thread: input.kind === "input",
  };
  const { startRead, ...run } = await insertRun({
    db: tx,
    run: {
      id: runId,
      threadId: thread.id,
      kind: input.kind,
      input,
      fromCheckpointId: null,
      owner: queued ? null : instanceId(),
      startedBy: principal.id,
      startedByLabel: principal.label,
      agentKey: `${thread.agentId}@${thread.agentVersion}`,
      leaseMs,
      queued,
      ...activeRunTrace(),
    },
    alongside: [
      threadStatusUpdate({
        db: tx,
        threadId: thread.id,
        status: "running",
        ...(input.kind === "input" && !thread.startedBy ? { startedBy: principal.id } : {}),
      }),
      await auditInsert({
        db: tx,
        entries: [
          ...(known.audit ?? []),
          {
            action: "run_started",
            actor: principal,
            threadId: thread.id,
            detail: {
              runId,
              kind: input.kind,
              ...(input.kind === "input" ? { message: input.text } : {}),
            },
          },
        ],
      }),
      // The decisions' receipts, in the same statement.
      ...receiptInserts({ db: tx, receipts: known.receipts ?? [] }),
    ],
    ...(queued ? {} : { startRead: runStartRead(readOptions) }),
  });
  return {
    run,
    startSeq: thread.lastSeq,
    ...(startRead !== undefined ? { startRead: await parseRunStartRead(tx, startRead, readOptions) } : {}),
  };
}

/**
 * Whether the locked thread's status alone says no run is active on it: every run's start sets `running` in the
 * transaction that inserts it (here, and a fork's), and only the transaction that closes a run sets these (a new
 * thread is `idle`). A thread `running` or `needs_attention` is looked up. (The one-active-run index stands behind
 * this either way.)
 */
function idleByStatus(thread: Thread): boolean {
  return (
    thread.status === "idle" ||
    thread.status === "interrupted" ||
    thread.status === "completed" ||
    thread.status === "failed" ||
    thread.status === "stopped"
  );
}

/**
 * New input while a run is active (or while earlier input still waits its turn): what the thread's agent declares for
 * double texting. `reject` leaves it to the usual 409; the others queue it durably, and `interrupt` / `rollback` ask
 * the active run to stop (it ends `cancelled`, and the queue starts this input next). Bounded per thread and per
 * principal (`assertQueueRoom`: 429, nothing written). Null: nothing is busy.
 */
async function queueIfBusy(
  tx: Tx,
  thread: Thread,
  principal: Principal,
  input: RunAgentInput,
): Promise<QueuedClaim | null> {
  const agent = findAgent(thread.agentId, thread.agentVersion);
  const strategy = agent ? multitaskOf(agent) : "reject";
  if (strategy === "reject") return null;
  const active = idleByStatus(thread) ? null : await getActiveRun({ db: tx, threadId: thread.id });
  const ahead = (await listWaitingInputs({ db: tx, threadId: thread.id })).length;
  if (!active && ahead === 0) return null;
  const text = userMessage(input);
  if (text === null) return null; // no message: a retry or a bare start, refused as before
  // The id it will run as must be free (a request sent twice, or an id reused): the same answer as for a run.
  if ((await getRun({ db: tx, runId: input.runId })) || (await getQueuedInput({ db: tx, id: input.runId }))) {
    throw new AppError("conflict:run_id", "A run with this runId already exists.");
  }
  await assertQueueRoom({ tx, waiting: ahead, principal });
  const queued = await enqueueInput({
    db: tx,
    entry: {
      id: input.runId,
      threadId: thread.id,
      input: { kind: "input", messageId: text.messageId, text: text.text } satisfies RunInput,
      strategy,
      behindRunId: active?.id ?? null,
      startedBy: principal.id,
      startedByLabel: principal.label,
    },
  });
  const stopping =
    active && (strategy === "interrupt" || strategy === "rollback")
      ? (
          await requestRunCancel({
            db: tx,
            threadId: thread.id,
            runId: active.id,
            by: newerMessageBy(principal),
          })
        ).state === "requested"
        ? active.id
        : null
      : null;
  await recordAudit({
    db: tx,
    entries: [
      {
        action: "input_queued",
        actor: principal,
        threadId: thread.id,
        detail: { runId: queued.id, strategy, behindRunId: active?.id ?? null, message: text.text },
      },
    ],
  });
  return { queued, position: ahead + 1, startSeq: thread.lastSeq, stopping };
}

/** Who stopped a run that newer input interrupted, as the page and its RUN_ERROR say it ("Stopped by …"). */
export function newerMessageBy(principal: Principal): string {
  return `a newer message from ${principal.label}`;
}

/** The last user message of a run input, checked like any message; null when the input carries none. */
function userMessage(input: RunAgentInput): { messageId: string; text: string } | null {
  const lastUser = [...input.messages].reverse().find((m) => m.role === "user");
  if (!lastUser) return null;
  const text = typeof lastUser.content === "string" ? lastUser.content : contentText(lastUser.content);
  if (!text.trim()) throw new AppError("unprocessable:empty_message", "The user message is empty.");
  if (text.length > MAX_MESSAGE_CHARS) {
    throw new AppError(
      "unprocessable:message_too_long",
      `The message is longer than ${MAX_MESSAGE_CHARS} characters.`,
      { fields: ["messages"], limit: MAX_MESSAGE_CHARS },
    );
  }
  return { messageId: lastUser.id, text };
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
      "The thread is waiting for a decision: take it before sending the agent new input.",
      { interrupts: pending.map((d) => ({ interruptId: d.interruptId, action: d.action })) },
    );
  }
  const message = userMessage(input);
  if (message) return { kind: "input", ...message };
  if (ticketMessage) return { kind: "input", messageId: `ticket-${input.runId}`, text: ticketMessage };
  // No message on a thread whose last run failed or was stopped: continue from where it stopped.
  if (thread.status === "failed" || thread.status === "stopped") return { kind: "retry" };
  throw new AppError("unprocessable:no_message", "A new run needs a user message.");
}

function contentText(content: unknown): string {
  if (!Array.isArray(content)) return "";
  return content
    .map((p) => (p && typeof p === "object" && "text" in p && typeof p.text === "string" ? p.text : ""))
    .join("");
}
