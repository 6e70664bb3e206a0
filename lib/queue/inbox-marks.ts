import "server-only";
import type { InboxDecisionItem, InboxPage, InboxThreadItem } from "@/lib/contract/inbox";
import { hasRole, type Principal } from "@/lib/contract/roles";
import type { Queryable } from "@/lib/db/tx";
import { type DecideVerdict, firstRefusal, mayDecideThreads } from "@/lib/runtime/agents/may-decide";
import { asAppError } from "./app-error";

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
  const verdicts = await mayDecideThreads({
    db,
    threadIds: items.map((i) => i.thread.threadId),
    principal,
    onThreadError: refusalFromPolicy,
  });
  return {
    ...page,
    items: items.map((item) => {
      const own = (verdicts.get(item.thread.threadId) ?? []).filter(
        (v) => v.interruptId === item.decision.interruptId || v.interruptId === "*",
      );
      const refusal = firstRefusal(own);
      return refusal ? { ...item, refusal: { code: refusal.code, reason: refusal.reason } } : item;
    }),
  };
}

/**
 * A refusal thrown while judging one thread: the runtime's policy code is bundled apart from the route and throws its
 * own copy of AppError, which `instanceof` in mayDecide does not recognise; such a throw is read as the refusal it is
 * and marks every decision of that thread. Anything else propagates.
 */
function refusalFromPolicy(error: unknown): DecideVerdict[] {
  const e = asAppError(error, "inbox marks");
  if (e.type !== "forbidden") throw e;
  return [{ interruptId: "*", action: "*", may: false, code: e.code, reason: e.message }];
}
