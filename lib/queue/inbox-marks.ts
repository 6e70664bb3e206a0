import "server-only";
import { hasRole, type Principal } from "@/lib/auth/roles";
import type { InboxDecisionItem, InboxPage, InboxThreadItem } from "@/lib/db/queries/inbox";
import type { Queryable } from "@/lib/db/tx";
import { firstRefusal, mayDecideThreads } from "@/lib/runtime/may-decide";

/**
 * Mark the pending items of an inbox page that `principal` may not decide (four-eyes, role), with the code and the
 * reason the decision would be refused — asked before the click, by the same checks (`mayDecide`). Pages of threads
 * and principals who cannot decide at all (viewers, keys) are returned as they are.
 */
export async function markDecidable<P extends InboxPage<InboxDecisionItem> | InboxPage<InboxThreadItem>>({
  db,
  page,
  principal,
}: {
  db: Queryable;
  page: P;
  principal: Principal;
}): Promise<P> {
  const items = page.items;
  if (principal.kind !== "user" || !hasRole(principal.role, "operator")) return page;
  if (!items.every((i): i is InboxDecisionItem => i.kind === "decision")) return page;
  const verdicts = await mayDecideThreads({ db, threadIds: items.map((i) => i.thread.threadId), principal });
  return {
    ...page,
    items: items.map((item) => {
      const own = (verdicts.get(item.thread.threadId) ?? []).filter(
        (v) => v.interruptId === item.decision.interruptId,
      );
      const refusal = firstRefusal(own);
      return refusal ? { ...item, refusal: { code: refusal.code, reason: refusal.reason } } : item;
    }),
  };
}
