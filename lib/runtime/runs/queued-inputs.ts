import "server-only";
import type { Principal } from "@/lib/contract/roles";
import type { Database } from "@/lib/db/client";
import { recordAudit } from "@/lib/db/queries/audit";
import { listOpenDecisions } from "@/lib/db/queries/decisions";
import { countEffectsSince } from "@/lib/db/queries/effects";
import {
  abandonRunCheckpoints,
  dropWaitingInput,
  hasWaitingInput,
  listWaitingInputs,
  markInputStarted,
  threadsWithIdleQueue,
} from "@/lib/db/queries/queued-inputs";
import { getActiveRun, getRun } from "@/lib/db/queries/runs";
import { lockThread } from "@/lib/db/queries/threads";
import type { QueuedInput } from "@/lib/db/schema";
import { env } from "@/lib/platform/env";
import { errorFields, logger } from "@/lib/platform/observability/logger";
import { findAgent } from "../agents/registry";
import { type ClaimedRun, startRun } from "./claim";
import { startedWith, startRunInBackground } from "./executor";
import type { RunInput } from "./run-input";

/*
 * Double texting (issue 32): input that arrived while its thread was busy waits in `queued_inputs` and starts, one at
 * a time and in arrival order, as soon as the thread holds no active run and waits for no decision. Whoever ends a run
 * starts the next input (the executor, here or on another instance); the recovery sweeper starts any the ending
 * missed — the process died first, the run ended on an instance that was killed — so a queued message outlives
 * restarts and deploys.
 */

/** The principal a queued input runs as: the one who sent it (id and label kept with the input). */
function senderOf(entry: QueuedInput): Principal {
  const kind = entry.startedBy.startsWith("key:")
    ? "key"
    : entry.startedBy.startsWith("system:")
      ? "system"
      : "user";
  return { kind, id: entry.startedBy, label: entry.startedByLabel ?? entry.startedBy, role: null };
}

/**
 * Start the thread's next queued input if it may run now: no active run, no decision pending or staged, an agent
 * version this process has, not closed. Returns the run started, or null. Safe to call from anywhere at any time: the
 * thread lock and the one-active-run index let exactly one caller start it.
 */
export async function startNextInput({
  database,
  threadId,
  inputWaiting,
}: {
  /** The whole handle: the run it starts executes through the checkpoint pool too. */
  database: Database;
  threadId: string;
  /** Whether input waits, when the run's end already said so (`finalizeRun`): no read of the queue then. */
  inputWaiting?: boolean | undefined;
}): Promise<ClaimedRun | null> {
  const { db } = database;
  // The common case, one read or none: nothing waits.
  if (!(inputWaiting ?? (await hasWaitingInput({ db, threadId })))) return null;
  const claimed = await db.transaction(async (tx) => {
    const thread = await lockThread({ tx, threadId });
    if (!thread || thread.status === "closed" || thread.status === "needs_attention") return null;
    if (!findAgent(thread.agentId, thread.agentVersion)) return null; // an instance that has its version starts it
    if (await getActiveRun({ db: tx, threadId })) return null;
    const open = await listOpenDecisions({ db: tx, threadId });
    if (open.pending.length > 0 || open.staged.length > 0) return null;
    // An input whose id a run took meanwhile (a client reusing ids) cannot start as that run: dropped, and the next one.
    let next: QueuedInput | undefined;
    for (const waiting of await listWaitingInputs({ db: tx, threadId })) {
      if (!(await getRun({ db: tx, runId: waiting.id }))) {
        next = waiting;
        break;
      }
      await dropWaitingInput({ db: tx, id: waiting.id });
    }
    if (!next || !(await markInputStarted({ db: tx, id: next.id }))) return null;
    let input = next.input as RunInput;
    // Rollback: the run stopped for this input is left behind — its checkpoints marked abandoned, and this input runs
    // from where that run started. (Had it ended by itself before the stop, there is nothing to roll back.) Never
    // behind a recorded effect: a run that recorded one (a credit, an email) made a fact the agent must keep knowing,
    // so this input runs from where it stopped instead, as under `interrupt` — and the audit says so.
    if (next.strategy === "rollback" && next.behindRunId && input.kind === "input") {
      const behind = await getRun({ db: tx, runId: next.behindRunId });
      const recorded =
        behind?.status === "cancelled"
          ? await countEffectsSince({ db: tx, threadId, since: behind.startedAt ?? behind.createdAt })
          : 0;
      if (recorded > 0 && behind) {
        await recordAudit({
          db: tx,
          entries: [
            {
              action: "input_queued",
              actor: senderOf(next),
              threadId,
              detail: { runId: next.id, rollback: "kept", behindRunId: behind.id, effectsRecorded: recorded },
            },
          ],
        });
      }
      const base =
        behind?.status === "cancelled" && recorded === 0
          ? await abandonRunCheckpoints({ db: tx, threadId, runId: behind.id, forRunId: next.id })
          : null;
      if (base) input = { ...input, fromCheckpointId: base };
    }
    return startRun(tx, thread, senderOf(next), next.id, input, env.RUN_LEASE_MS, { active: null });
  });
  if (claimed) {
    startRunInBackground({
      database,
      run: claimed.run,
      startSeq: claimed.startSeq,
      options: startedWith(claimed),
    });
  }
  return claimed;
}

/** {@link startNextInput} after a run of the thread ended, without failing the caller (the sweeper tries again). */
export function startNextInputSoon(request: {
  database: Database;
  threadId: string;
  inputWaiting?: boolean | undefined;
}): void {
  const { threadId } = request;
  startNextInput(request).catch((error: unknown) =>
    logger().warn({ threadId, ...errorFields(error) }, "queued input: start failed; the sweeper retries"),
  );
}

/** The sweeper's part: start the next input of every thread whose queue waits with nothing running. */
export async function startIdleQueues({ database }: { database: Database }): Promise<number> {
  let started = 0;
  for (const threadId of await threadsWithIdleQueue({ db: database.db })) {
    if (await startNextInput({ database, threadId })) started += 1;
  }
  return started;
}
