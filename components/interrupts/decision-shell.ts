/**
 * The rules every decision form shares, kept pure so they are tested without a browser (`useDecisionForm` holds
 * the state and does the calls). A submission goes to the card at most once: not while the page has the form
 * closed, not twice, never the answer that acts when the policy refuses it to this operator, never with a field
 * still wrong. The card may still refuse the answer (`validateAnswer`): the form stays open and the card says why.
 * Once the card took it, the form is closed until the page owns it again (its `disabled` changes: the answer went
 * out, was refused by the server and the form given back, or was answered elsewhere).
 */

/** Where a form is: open to answer, or its answer handed to the card. */
export interface ShellState {
  phase: "open" | "answered";
  /** What is wrong with the last submission, said next to the field (a required note, an amount, a choice). */
  error: string | null;
}

export const openShell: ShellState = { phase: "open", error: null };

/** What the form knows at the moment of a submission. */
export interface Submission {
  /** The page has the form closed (sending, sent, someone else's claim or decision). */
  disabled: boolean;
  /** Why this operator may not give the answer that acts (`mayDecide`), or null. */
  refusal: string | null;
  /** This answer acts on the world (approve, send, grant, raise, fire): the refusal applies to it. */
  acts: boolean;
  /** What is wrong with the form's fields, or null when the answer may go. */
  problem: string | null;
}

export type SubmitStep =
  | { send: true; state: ShellState }
  | { send: false; why: "closed" | "answered" | "refused" | "invalid"; state: ShellState };

/** A submission: whether the answer goes to the card, and the form's state after it. */
export function submitStep(state: ShellState, s: Submission): SubmitStep {
  if (s.disabled) return { send: false, why: "closed", state };
  if (state.phase === "answered") return { send: false, why: "answered", state };
  if (s.acts && s.refusal) return { send: false, why: "refused", state };
  if (s.problem !== null) return { send: false, why: "invalid", state: { ...state, error: s.problem } };
  return { send: true, state: { ...state, error: null } };
}

/** The card's verdict on an answer sent: taken (the form closes) or refused (it stays open; the card says why). */
export function answeredStep(state: ShellState, taken: boolean): ShellState {
  return taken ? { ...state, phase: "answered" } : { ...state, phase: "open" };
}

/** The page opened or closed the form itself: it owns the form again, whatever was answered before. */
export function releasedStep(state: ShellState): ShellState {
  return state.phase === "open" ? state : { ...state, phase: "open" };
}

/** What the form shows: whether its controls are closed, whether the answer that acts is, and the refusal. */
export function shellView(state: ShellState, props: { disabled: boolean; refusal?: string | null }) {
  const closed = props.disabled || state.phase === "answered";
  const refusal = props.refusal ?? null;
  return { closed, actClosed: closed || Boolean(refusal), refusal, error: state.error };
}
