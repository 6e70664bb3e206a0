import "server-only";
import { AppError } from "@/lib/contract/errors";
import type { AppDb } from "@/lib/db/open";
import { readCompactionSnapshot } from "@/lib/db/queries/events";
import { getActiveRun } from "@/lib/db/queries/runs";
import { getThread } from "@/lib/db/queries/threads";
import { instanceId } from "@/lib/platform/instance";
import { eventStreamResponse } from "./stream";

/**
 * Reconnect (`GET /api/threads/{id}/events`): the SSE response of the thread's logged events after `afterSeq`, then
 * the live ones while a run is active, then the end. Retention compacts the log of finished runs: asked for events
 * before the thread's compacted seq, it starts with a snapshot at that seq (see `readCompactionSnapshot`) and goes on
 * after it. 404 `not_found:thread` when there is no such thread.
 */
export async function followThreadEvents({
  db,
  threadId,
  afterSeq,
  signal,
}: {
  db: AppDb;
  threadId: string;
  afterSeq: number;
  /** The request's: the stream ends when the client goes. */
  signal: AbortSignal;
}): Promise<Response> {
  const thread = await getThread({ db, threadId });
  if (!thread) throw new AppError("not_found:thread", `Thread ${threadId} does not exist.`);
  const active = await getActiveRun({ db, threadId });
  const compactedSeq = thread.eventsCompactedSeq;
  const prelude =
    afterSeq < compactedSeq ? await readCompactionSnapshot({ db, threadId, compactedSeq }) : undefined;
  // A run not executing in this process (another instance's, or not claimed yet): its appends must wake us.
  const remote = Boolean(active && active.owner !== instanceId());
  return eventStreamResponse(
    { db, threadId, afterSeq: prelude ? compactedSeq : afterSeq, runId: active?.id, prelude, remote },
    signal,
  );
}
