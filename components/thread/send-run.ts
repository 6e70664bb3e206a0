import { HttpAgent, type ResumeEntry } from "@ag-ui/client";
import { AppError } from "@/lib/contract/errors";
import type { StreamEvent } from "./apply-event";
import type { ThreadConnection } from "./thread-connection";

/** An HTTP refusal as HttpAgent reports it: `status` and the parsed JSON body on the error. */
function refusalOf(error: unknown): AppError | null {
  const e = error as { status?: unknown; payload?: unknown } | null;
  return e && typeof e.status === "number" ? AppError.fromBody(e.payload, e.status) : null;
}

const CONFLICTS = new Set(["conflict:interrupt_resolved", "conflict:interrupt_superseded"]);

/**
 * Start or resume the thread's run through an unmodified `HttpAgent` and stream its events into the store. Returns
 * false without sending when a request of this page is already in flight: a second click cannot send a decision
 * twice. `resume` must answer every pending interrupt (the server refuses otherwise).
 */
export async function sendRun(
  connection: ThreadConnection,
  request: { resume?: ResumeEntry[]; actor: string },
): Promise<boolean> {
  const { store, threadId } = connection;
  if (connection.streaming || store.current.sending) return false;
  connection.streaming = true;
  const ids = request.resume?.map((r) => r.interruptId) ?? [];
  store.update((s) => ({ ...s, sending: true, error: null, ownIds: [...s.ownIds, ...ids] }));
  const agent = new HttpAgent({ url: `/api/threads/${encodeURIComponent(threadId)}/runs`, threadId });
  const abort = () => agent.abortRun();
  connection.signal.addEventListener("abort", abort, { once: true });
  let started = false;
  let brokenBeforeStart = false;
  try {
    await agent.runAgent(
      { ...(request.resume ? { resume: request.resume } : {}), forwardedProps: { actor: request.actor } },
      {
        onEvent: ({ event }) => {
          if (event.type === "RUN_STARTED") started = true;
          store.applyEvent(event as unknown as StreamEvent);
        },
      },
    );
  } catch (error) {
    if (connection.signal.aborted) return true;
    const refusal = refusalOf(error);
    if (refusal) settleRefusal(connection, refusal, ids);
    // Broken before the run started: whether the server took the decision is unknown until the view says so.
    else brokenBeforeStart = !started;
  } finally {
    connection.signal.removeEventListener("abort", abort);
    connection.streaming = false;
    store.update((s) => ({ ...s, sending: false }));
  }
  // Whatever happened, the event log has the rest: follow it from the last seq applied, then re-read the view.
  await connection.follow();
  if (brokenBeforeStart) releaseIfStillPending(connection, ids);
  return true;
}

/** A refusal before the stream started: say who decided on a conflict, show anything else as it came. */
export function settleRefusal(connection: ThreadConnection, refusal: AppError, ids: string[]): void {
  const { store } = connection;
  if (CONFLICTS.has(refusal.code)) {
    const d = refusal.details ?? {};
    const conflicted = typeof d.interruptId === "string" ? [d.interruptId] : ids;
    for (const id of conflicted) {
      store.conflict(id, {
        resolvedBy: typeof d.resolvedBy === "string" ? d.resolvedBy : null,
        resolvedAt: typeof d.resolvedAt === "string" ? d.resolvedAt : null,
        answer: d.answer,
        message: refusal.message,
        superseded: refusal.code === "conflict:interrupt_superseded",
      });
    }
  }
  if (CONFLICTS.has(refusal.code)) return; // the closed form says who decided; no banner on top of it
  store.update((s) => ({
    ...s,
    ownIds: s.ownIds.filter((id) => !ids.includes(id)),
    error: { code: refusal.code, message: refusal.message },
  }));
}

/**
 * After a broken request, the decisions it carried may still be pending (the server never got it): give their forms
 * back, with a word, so the operator can send again. The server's compare-and-set keeps a resend from counting twice.
 */
function releaseIfStillPending(connection: ThreadConnection, ids: string[]): void {
  const { store } = connection;
  const state = store.current;
  if (state.activeRunId) return;
  const back = ids.filter((id) => state.pending.some((p) => p.interruptId === id));
  if (back.length === 0) return;
  store.update((s) => ({
    ...s,
    ownIds: s.ownIds.filter((id) => !back.includes(id)),
    error: {
      code: "unavailable:not_sent",
      message: "The decision did not reach the server. Check it and send it again.",
    },
  }));
}
