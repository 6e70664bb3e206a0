import { postJson } from "@/components/ui/fetch-json";
import { AppError, appErrorOf } from "@/lib/contract/errors";
import { settleRefusal } from "./send-run";
import type { ThreadConnection } from "./thread-connection";

/**
 * Answer one decision on its own (a thread waiting for several, each answered by its own reviewer): POST it to the
 * decision endpoint. While other decisions are pending the answer is kept by the server and the card closes with
 * who answered; the answer that completes the set resumes the run, which the page then follows from its last seq.
 * A second click does nothing: the card's id is this page's from the first one.
 */
export async function decideCard(
  connection: ThreadConnection,
  interruptId: string,
  answer: unknown,
): Promise<void> {
  const { store, threadId } = connection;
  if (store.current.ownIds.includes(interruptId)) return;
  store.update((s) => ({ ...s, error: null, ownIds: [...s.ownIds, interruptId] }));
  try {
    await postJson(
      `/api/threads/${encodeURIComponent(threadId)}/decisions/${encodeURIComponent(interruptId)}`,
      {
        status: "resolved",
        answer,
      },
    );
  } catch (error) {
    settleRefusal(
      connection,
      appErrorOf(error) ?? new AppError("unavailable:not_sent", "The decision did not reach the server."),
      [interruptId],
    );
  }
  await connection.follow();
}
