import "server-only";
import { emailWarnings } from "@/lib/agents/kit/email-effects";
import { formatMoney as euros } from "@/lib/contract/wire";
import type { Queryable } from "@/lib/db/tx";
import type { SideEffectWarning } from "@/lib/runtime/agents/registry";
import { listRefundsForOrder } from "@/lib/shop/refunds";
import type { RefundStateValue } from "./state";

/**
 * What forking at a checkpoint with these values would reach again: a refund or an email already recorded for the
 * thread's order or thread, which the state at the checkpoint does not know about yet (it precedes them). Effects
 * belong to the thread, not to a branch: a paid refund stays paid, and a refund approved again on the branch is a
 * new one that the ledger allows only within what is left of the order total. The operator is told so beforehand.
 */
export async function sideEffectWarnings({
  db,
  threadId,
  values,
}: {
  db: Queryable;
  threadId: string;
  values: Partial<RefundStateValue> | Record<string, unknown>;
}): Promise<SideEffectWarning[]> {
  const state = values as Partial<RefundStateValue>;
  const warnings: SideEffectWarning[] = [];
  const orderId = state.order?.id ?? state.orderRef ?? null;
  if (orderId && !state.refund) {
    for (const refund of await listRefundsForOrder({ db, orderId })) {
      warnings.push({
        code: "side_effect:refund",
        recordId: refund.id,
        message:
          `A refund of ${euros(refund.amountCents, refund.currency)} for ${orderId} is already recorded (later on ` +
          "this branch or on another one), and a branch cannot undo it. A branch from here may reach the refund " +
          "step again: a refund approved there is a new one, refused if it would exceed the order total.",
      });
    }
  }
  if (!state.email) warnings.push(...(await emailWarnings({ db, threadId })));
  return warnings;
}
