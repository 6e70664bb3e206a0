import "server-only";
import type { BaseMessage } from "@langchain/core/messages";
import { Annotation, type Messages, messagesStateReducer } from "@langchain/langgraph";
import type { ReviewChangeAnswer, ReviewChangePayload, WaitTimerAnswer } from "@/lib/contract/questions";
import { lastValue } from "../kit/channels";

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

/**
 * Version 2: an approved payout change waits a cooling-off period (a durable timer) before it is made, so a change an
 * attacker slipped past both reviews can still be cancelled. The period is fixed at intake (a deploy that changes
 * `ACCOUNT_CHANGE_COOLOFF_MS` does not move the timers already asked).
 */
export const AccountChangeStateV2 = Annotation.Root({
  ...AccountChangeState.spec,
  coolOffMs: lastValue<number>(() => 0),
  /** The timer's answer: `fired` (the period is over, or someone fired it early) or `cancelled` with why. */
  coolOff: lastValue<WaitTimerAnswer | null>(() => null),
});

export type AccountChangeV2Value = typeof AccountChangeStateV2.State;
export type AccountChangeV2Update = typeof AccountChangeStateV2.Update;
