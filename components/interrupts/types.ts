import type { AnswerOf, InterruptAction, PayloadOf } from "@/lib/contract/questions";
import type { OtherWay } from "@/lib/contract/questions/kinds";

/** What every decision form gets: its interrupt's typed payload, and where to hand the operator's answer. */
export interface DecisionFormProps<A extends InterruptAction> {
  interruptId: string;
  payload: PayloadOf<A>;
  /** Every control is disabled: the answer is on its way, was sent, or somebody else decided. */
  disabled: boolean;
  /**
   * The operator's answer; the card validates it against the payload (`validateAnswer`) before it is sent. True when
   * the card took it, false when it refused it (and says why): the form stays open. Forms call it through
   * `useDecisionForm`'s `submit`, never directly.
   */
  onAnswer: (answer: AnswerOf[A]) => boolean;
  /**
   * Why this operator may not give the answer that acts (approve, send, grant) — four-eyes, role — known before the
   * click (`mayDecide` on the server); null when they may. Rejecting stays open.
   */
  refusal?: string | null;
  /**
   * The answer somebody already took (a closed form, from the decision ledger or the 409): the form shows it in
   * place of its defaults, so a closed form never shows an option nobody chose.
   */
  taken?: AnswerOf[A];
  /**
   * "Answer differently": this branch asks again what the other line answered; the form opens on the other way
   * (the opposite answer marked, the option not taken selected) and says so. Nothing is sent until the operator
   * answers.
   */
  otherWay?: OtherWay | null;
}
