import "server-only";
import type { RunAgentInput } from "@ag-ui/core";
import type { Principal } from "@/lib/contract/roles";
import type { Database } from "@/lib/db/open";
import type { QueuedInput } from "@/lib/db/schema";
import { env } from "@/lib/platform/env";
import { stopForNewerInput } from "./cancel";
import { claimRun } from "./claim";
import { startedWith, startRunInBackground } from "./executor";
import { eventStreamResponse } from "./stream";

/** New input kept for after the thread's active run: what `POST …/runs` answers (202) instead of a stream. */
export interface QueuedRun {
  queued: true;
  /** The run it starts as. */
  runId: string;
  /** The agent's double-texting strategy that queued it (`enqueue`, `interrupt`, `rollback`). */
  strategy: QueuedInput["strategy"];
  /** Its place in the thread's queue, from 1. */
  position: number;
  /** The run asked to stop for it (`interrupt` / `rollback`), if any. */
  stopping: string | null;
  /** Where it streams from once it runs. */
  events: string;
}

/**
 * Start or resume a run with an AG-UI RunAgentInput (`POST /api/threads/{id}/runs`): claimed by {@link claimRun} (its
 * refusals throw before anything streams), then streamed from its first event while it executes in the background.
 * When the thread is busy and its agent queues new input, the input waits to run next (`interrupt` and `rollback`
 * stop the current run) and no stream is held open meanwhile: the wait may be for a person's decision.
 */
export async function startOrQueueRun({
  database,
  threadId,
  input,
  principal,
  signal,
}: {
  /** The route's whole handle: the run it starts executes through the checkpoint pool too. */
  database: Database;
  threadId: string;
  input: RunAgentInput;
  principal: Principal;
  /** The request's: the stream ends when the client goes (the run goes on). */
  signal: AbortSignal;
}): Promise<{ queued: QueuedRun } | { stream: Response }> {
  const claimed = await claimRun({ database, threadId, input, principal, leaseMs: env.RUN_LEASE_MS });
  if ("queued" in claimed) {
    stopForNewerInput(claimed.stopping, principal);
    const { queued, startSeq, position } = claimed;
    return {
      queued: {
        queued: true,
        runId: queued.id,
        strategy: queued.strategy,
        position,
        stopping: claimed.stopping,
        events: `/api/threads/${encodeURIComponent(threadId)}/events?after=${startSeq}`,
      },
    };
  }
  // The stream first: it hears the run's events from the first one on, so it need not read the log to start.
  const stream = eventStreamResponse(
    { db: database.db, threadId, afterSeq: claimed.startSeq, runId: claimed.run.id, fresh: true },
    signal,
  );
  startRunInBackground({
    database,
    run: claimed.run,
    startSeq: claimed.startSeq,
    options: startedWith(claimed),
  });
  return { stream };
}
