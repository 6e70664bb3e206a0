import { authedFetch, type Who } from "../support/auth";
import { until } from "./setup";

/*
 * The thread API as the HTTP suites use it: the thread view, the view once no run is active, and one decision's
 * answer. Each suite reads the fields it cares about (`T`).
 */

/** The thread's view as a supervisor (or `who`) reads it (`GET /api/threads/{id}`). */
export async function threadView<T>(base: string, threadId: string, who: Who = "supervisor"): Promise<T> {
  const res = await authedFetch(`${base}/api/threads/${threadId}`, {}, who);
  if (res.status !== 200) throw new Error(`thread view: ${res.status}`);
  return (await res.json()) as T;
}

/** The view once no run is active on the thread: what it waits for, or how it ended. */
export function settledView<T extends { activeRunId: string | null; status: string }>(
  base: string,
  threadId: string,
  ms = 60_000,
  who: Who = "supervisor",
): Promise<T> {
  return until(
    "the thread to settle",
    async () => {
      const v = await threadView<T>(base, threadId, who);
      return v.activeRunId === null && v.status !== "running" ? v : undefined;
    },
    ms,
  );
}

/** Answer one decision on its own (`POST …/decisions/{interruptId}`) as `who`: the raw response. */
export function postDecision(base: string, threadId: string, interruptId: string, answer: unknown, who: Who) {
  return authedFetch(
    `${base}/api/threads/${threadId}/decisions/${interruptId}`,
    {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ status: "resolved", answer }),
    },
    who,
  );
}
