import "server-only";
import type { BaseMessage } from "@langchain/core/messages";
import { Annotation, type Messages, messagesStateReducer } from "@langchain/langgraph";
import type { ReviewChangeAnswer, ReviewChangePayload } from "@/lib/interrupts";
import { lastValue } from "../channels";

/** The change a customer asked for. */
export type AccountChange = ReviewChangePayload["change"];
export type ReviewKind = ReviewChangePayload["review"];

/** What became of the request. */
export interface ChangeOutcome {
  status: "applied" | "rejected";
  /** The reviews' notes when rejected. */
  reasons: string[];
  /** The "could not change" email queued to the customer (outbox id), if they have an email on file. */
  emailId: string | null;
  /**
   * The `account_update` effect that applies an approved change (the dispatcher applies it once, then emails the
   * customer it was made); absent in outcomes written before it existed, when nothing was changed.
   */
  effectId?: string | null;
}

/**
 * The account-change agent's state. `reviews` merges the answers of the two parallel reviews (each review node
 * writes its own key in the same super-step).
 */
export const AccountChangeState = Annotation.Root({
  messages: Annotation<BaseMessage[], Messages>({ reducer: messagesStateReducer, default: () => [] }),
  customerMessage: lastValue<string>(() => ""),
  orderRef: lastValue<string | null>(() => null),
  customer: lastValue<{ name: string; email: string } | null>(() => null),
  change: lastValue<AccountChange | null>(() => null),
  reviews: Annotation<Partial<Record<ReviewKind, ReviewChangeAnswer>>>({
    reducer: (current, update) => ({ ...current, ...update }),
    default: () => ({}),
  }),
  outcome: lastValue<ChangeOutcome | null>(() => null),
  /** Who edited this branch by a fork (set by the runtime): nobody who edited may approve a review. */
  editedBy: lastValue<string | null>(() => null),
});

export type AccountChangeValue = typeof AccountChangeState.State;
export type AccountChangeUpdate = typeof AccountChangeState.Update;
