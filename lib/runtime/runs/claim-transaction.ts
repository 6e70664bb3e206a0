import "server-only";
import { AppError, appErrorOf, errorCodeOf } from "@/lib/contract/errors";
import type { AppDb, Database } from "@/lib/db/open";
import { getDecisions, listStagedDecisions } from "@/lib/db/queries/decisions";
import { getActiveRun } from "@/lib/db/queries/runs";
import { getThread, markNeedsAttention } from "@/lib/db/queries/threads";
import type { Thread } from "@/lib/db/schema";
import { sqlState } from "@/lib/db/sql-client";
import type { Tx } from "@/lib/db/tx";
import { ClaimObserver } from "@/lib/runtime/runs/runs";
import {
  compareVersions,
  findAgent,
  getAgent,
  getAgentGraph,
  hasAgent,
  threadAgent,
} from "../agents/registry";
import { declaredMigration, migrateThread, migrationFailed } from "./migrate";

/*
 * The transaction every claim runs in, and the check a resume may need before it (./claim.ts, ./decide.ts): a thread
 * whose version needs a look at the graph's state (a declared migration, a version this process lacks, a status that
 * is not plainly "waiting") gets {@link preflight} outside the transaction, then the claim again; constraint
 * violations of a concurrent request become the same 409s as the checks.
 */

/** What a claim transaction answers when the thread needs {@link preflight} before its answers can be taken. */
export const PREFLIGHT_FIRST = Symbol("preflight first");

/**
 * A resume's claim whose thread may need the version check first ({@link preflight}, which reads the graph's state
 * and may migrate the thread, so it runs outside the claim's transaction). In the common case the locked thread
 * shows it needs none (`checked` false, and `work` goes on); otherwise `work` answers {@link PREFLIGHT_FIRST}
 * having written nothing, the check runs, and the claim runs again with `checked` true. The thread is read once.
 */
export async function claimAfterPreflight<T>(
  database: Database,
  threadId: string,
  runId: string,
  interruptIds: string[],
  work: (tx: Tx, observer: ClaimObserver, checked: boolean) => Promise<T | typeof PREFLIGHT_FIRST>,
): Promise<T> {
  const { db } = database;
  const first = await inClaimTransaction(db, threadId, runId, (tx, observer) => work(tx, observer, false));
  if (first !== PREFLIGHT_FIRST) return first;
  await preflight(database, threadId, interruptIds);
  const second = await inClaimTransaction(db, threadId, runId, (tx, observer) => work(tx, observer, true));
  if (second === PREFLIGHT_FIRST) throw new Error("a checked claim asked for its check again");
  return second;
}

/**
 * Whether the thread's answers may be taken as its ledger recorded them, with no look at the graph's state: no
 * migration declared for its version, paused under a version this process runs. {@link preflight} returns at once
 * for exactly these threads.
 */
export function answerableAsRecorded(thread: Thread): boolean {
  return (
    !declaredMigration(thread) &&
    thread.status === "interrupted" &&
    findAgent(thread.agentId, thread.agentVersion) !== undefined
  );
}

/**
 * Run a claim transaction; constraint violations raised by a concurrent request become the same 409s as the checks.
 * The claim is the first span of the run's trace; the decisions it settles are counted once it commits. A claim that
 * stepped back for its {@link preflight} wrote nothing; its trace says so.
 */
async function inClaimTransaction<T>(
  db: AppDb,
  threadId: string,
  runId: string,
  work: (tx: Tx, observer: ClaimObserver) => Promise<T | typeof PREFLIGHT_FIRST>,
): Promise<T | typeof PREFLIGHT_FIRST> {
  const observer = new ClaimObserver(threadId, runId);
  try {
    const result = await observer.run(() => db.transaction((tx) => work(tx, observer)));
    if (result === PREFLIGHT_FIRST) {
      observer.steppedBack();
      return result;
    }
    observer.committed(result);
    return result;
  } catch (error) {
    observer.failed(error);
    // A thread whose version is gone (or whose graph no longer asks what is answered) waits for a supervisor; the
    // refusal itself wrote nothing, this mark is made on its own.
    if (errorCodeOf(error) === "conflict:graph_version" && !appErrorOf(error)?.details?.newer) {
      await markNeedsAttention({ db, threadId });
    }
    throw mapConstraintError(error);
  }
}

export function versionIsNewer(thread: Thread): boolean {
  return (
    hasAgent(thread.agentId) && compareVersions(thread.agentVersion, getAgent(thread.agentId).version) > 0
  );
}

/**
 * Before a resume: the interrupts being answered must be pending in the state the run will continue from, under
 * the thread's version. If the graph no longer has them (a renamed node, a version gone), the claim is refused — a
 * resume that finds nothing to resume would complete silently, with no refund and no reply.
 */
export async function assertAnswerable(thread: Thread, interruptIds: string[]): Promise<void> {
  if (!findAgent(thread.agentId, thread.agentVersion) && versionIsNewer(thread)) return; // checked where it runs
  const agent = threadAgent(thread);
  const graph = await getAgentGraph(agent);
  const state = await graph.getState({ configurable: { thread_id: thread.id } });
  const pending = new Set(state.tasks.flatMap((t) => t.interrupts ?? []).map((i) => i.id));
  const missing = interruptIds.filter((id) => !pending.has(id));
  if (missing.length > 0) {
    throw new AppError(
      "conflict:graph_version",
      `The graph of ${thread.agentId} version ${thread.agentVersion} no longer asks what is being answered; a supervisor must migrate or fork this thread.`,
      { agent: thread.agentId, threadVersion: thread.agentVersion, missing, newer: false },
    );
  }
}

function mapConstraintError(error: unknown): unknown {
  const known = appErrorOf(error);
  if (known) return known;
  const cause = (error as { cause?: unknown })?.cause ?? error;
  const constraint = (cause as { constraint?: string })?.constraint ?? "";
  if (sqlState(cause) === "23505" && constraint === "runs_one_active_per_thread") {
    return new AppError("conflict:run_active", "A run is already in progress on this thread.");
  }
  if (sqlState(cause) === "23505" && (constraint === "runs_pkey" || constraint === "queued_inputs_pkey")) {
    return new AppError("conflict:run_id", "A run with this runId already exists.");
  }
  if (sqlState(cause) === "40P01" || sqlState(cause) === "40001") {
    return new AppError("conflict:retry", "The request collided with another one; try again.");
  }
  return error;
}

/**
 * The version check of a resume, before its transaction (reading the graph's state inside it would wait on itself on
 * the embedded database, which has one connection): the interrupts answered now and those staged earlier must be
 * pending in the thread's state. A refusal marks the thread needs_attention.
 */
async function preflight(database: Database, threadId: string, interruptIds: string[]): Promise<void> {
  const { db } = database;
  const thread = await getThread({ db, threadId });
  if (!thread) return; // the transaction says not_found
  // A newer version declares how to move this thread: move it (once), and ask for the answer to the new question.
  if (declaredMigration(thread)) {
    const outcome = await migrateThread({ database, threadId }).catch(async (error: unknown) => {
      // Another instance (or its sweeper) migrated it a moment ago: the same answer as if this one had.
      const movedTo = errorCodeOf(error) === "conflict:thread_moved" && appErrorOf(error)?.details?.movedTo;
      if (typeof movedTo === "string") {
        return { status: "started" as const, runId: null, from: thread.agentVersion, to: movedTo };
      }
      const known = appErrorOf(error);
      if (known?.code === "conflict:graph_version") await migrationFailed({ db, threadId, error: known });
      throw error;
    });
    if (outcome.status === "started") {
      throw new AppError(
        "conflict:graph_version",
        `This thread is moving from version ${outcome.from} to version ${outcome.to} of its agent, which asks its question again: answer the new one.`,
        {
          agent: thread.agentId,
          threadVersion: outcome.from,
          currentVersion: outcome.to,
          newer: false,
          migrating: true,
          runId: outcome.runId,
        },
      );
    }
  }
  // The common case needs no look at the state: the thread paused under a version this process runs, and the run
  // that paused it recorded exactly the interrupts pending at its head, in the transaction that set `interrupted`
  // (finalize.ts); nothing moves the head without a run that records again. Any other status (a run in progress, a
  // run that ended while the ledger still waited, needs_attention) takes the full check.
  if (thread.status === "interrupted" && findAgent(thread.agentId, thread.agentVersion)) return;
  // Only decisions still open in the ledger, on a thread nothing runs on: anything else (an unknown id, one already
  // decided, a race lost to another operator, a run in progress) gets its own answer from the transaction.
  const open = async () => {
    const staged = (await listStagedDecisions({ db, threadId })).map((d) => d.interruptId);
    const pending = (await getDecisions({ db, interruptIds }))
      .filter((d) => d.threadId === threadId && d.status === "pending")
      .map((d) => d.interruptId);
    return (await getActiveRun({ db, threadId })) ? [] : [...pending, ...(pending.length > 0 ? staged : [])];
  };
  const ids = await open();
  if (ids.length === 0) return;
  try {
    await assertAnswerable(thread, ids);
  } catch (error) {
    const known = appErrorOf(error);
    if (known?.code !== "conflict:graph_version") throw error;
    // The state may have moved on because someone else's answer just resumed the thread: ask the ledger again.
    const still = await open();
    if (!ids.every((id) => still.includes(id))) return;
    if (!known.details?.newer) await markNeedsAttention({ db, threadId });
    throw error;
  }
}
