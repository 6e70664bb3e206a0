import "server-only";
import type { RefundNode } from "./context";

/**
 * note_approval (new in version 2, right after the approval): marks large approved refunds `high` priority for the
 * payment team. It reads the state field version 2 added (`priority`, default "normal").
 */
export function noteApprovalNode(): RefundNode {
  return (state) => ({
    priority: (state.decision?.amountCents ?? 0) >= 40_000 ? "high" : state.priority,
  });
}
