import "server-only";
import { listEmailsForThread } from "@/lib/db/queries/outbox";
import { listRefundsForOrder } from "@/lib/db/queries/refunds";
import { getThread } from "@/lib/db/queries/threads";
import type { Queryable } from "@/lib/db/tx";
import { AppError } from "@/lib/errors";
import type { RefundStateValue } from "@/lib/graphs/refund";
import { formatMoney } from "@/lib/wire";
import { getRefundGraph } from "./graph";

/** A recorded side effect that a branch from some checkpoint would reach again. */
export interface SideEffectWarning {
  code: "side_effect:refund" | "side_effect:email";
  message: string;
  /** The ledger row that prevents doing it twice. */
  recordId: string;
}

/**
 * What forking at a checkpoint with these values would reach again: a refund or an email already recorded for the
 * thread's order or thread, which the state at the checkpoint does not know about yet (it precedes them). The
 * ledgers (refunds by order, outbox by thread) make the repeat a no-op; the operator is told so beforehand.
 */
export async function sideEffectWarnings({
  db,
  threadId,
  values,
}: {
  db: Queryable;
  threadId: string;
  values: Partial<RefundStateValue>;
}): Promise<SideEffectWarning[]> {
  const warnings: SideEffectWarning[] = [];
  const orderId = values.order?.id ?? values.orderRef ?? null;
  if (orderId && !values.refund) {
    for (const refund of await listRefundsForOrder({ db, orderId })) {
      warnings.push({
        code: "side_effect:refund",
        recordId: refund.id,
        message:
          `A refund of ${formatMoney(refund.amountCents, refund.currency)} for ${orderId} is already recorded (later on ` +
          "this branch or on another one). A branch from here may reach the refund step again; the refund ledger " +
          "returns the recorded refund instead of paying a second time.",
      });
    }
  }
  if (!values.email) {
    for (const email of await listEmailsForThread({ db, threadId })) {
      warnings.push({
        code: "side_effect:email",
        recordId: email.id,
        message:
          `The reply "${email.subject}" to ${email.toAddress} is already sent (later on this branch or on another ` +
          "one). A branch from here may reach the email step again; the outbox keeps one reply per thread, so no " +
          "second email is sent.",
      });
    }
  }
  return warnings;
}

/** The warnings for forking at one checkpoint of a thread (`not_found:thread` / `not_found:checkpoint`). */
export async function checkpointSideEffects({
  db,
  threadId,
  checkpointId,
}: {
  db: Queryable;
  threadId: string;
  checkpointId: string;
}): Promise<SideEffectWarning[]> {
  if (!(await getThread({ db, threadId }))) {
    throw new AppError("not_found:thread", `Thread ${threadId} does not exist.`);
  }
  const graph = await getRefundGraph();
  const state = await graph.getState({
    configurable: { thread_id: threadId, checkpoint_ns: "", checkpoint_id: checkpointId },
  });
  // An unknown checkpoint (or another thread's) reads as an empty snapshot without metadata.
  if (!state.metadata) {
    throw new AppError(
      "not_found:checkpoint",
      `Checkpoint ${checkpointId} of thread ${threadId} does not exist.`,
    );
  }
  return sideEffectWarnings({ db, threadId, values: state.values as Partial<RefundStateValue> });
}
