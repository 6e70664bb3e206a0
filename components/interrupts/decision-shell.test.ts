import { describe, expect, it } from "vitest";
import {
  answeredStep,
  openShell,
  releasedStep,
  type ShellState,
  type Submission,
  shellView,
  submitStep,
} from "./decision-shell";

const ok: Submission = { disabled: false, refusal: null, acts: true, problem: null };
const refused = "Four-eyes: you asked for this refund, so somebody else approves it.";

/** Submit, then let the card answer as `taken` says, as the hook does. */
function submit(state: ShellState, s: Submission, taken = true) {
  const step = submitStep(state, s);
  return { sent: step.send, state: step.send ? answeredStep(step.state, taken) : step.state };
}

describe("the decision forms' shell", () => {
  it("sends an answer once and closes the form when the card takes it", () => {
    const first = submit(openShell, ok);
    expect(first.sent).toBe(true);
    expect(shellView(first.state, { disabled: false }).closed).toBe(true);
    const again = submitStep(first.state, ok);
    expect(again).toMatchObject({ send: false, why: "answered" });
  });

  it("a double submit sends once", () => {
    let state = openShell;
    let sends = 0;
    for (let i = 0; i < 2; i++) {
      const step = submit(state, ok);
      if (step.sent) sends++;
      state = step.state;
    }
    expect(sends).toBe(1);
  });

  it("keeps the form open and shows the refusal when the answer that acts is refused", () => {
    const step = submitStep(openShell, { ...ok, refusal: refused });
    expect(step).toMatchObject({ send: false, why: "refused" });
    const view = shellView(step.state, { disabled: false, refusal: refused });
    expect(view).toMatchObject({ closed: false, actClosed: true, refusal: refused });
  });

  it("still sends the answer that does not act (reject) under a refusal", () => {
    expect(submitStep(openShell, { ...ok, acts: false, refusal: refused }).send).toBe(true);
  });

  it("keeps the form open when the card refuses the answer, and it can be sent again", () => {
    const refusedByCard = submit(openShell, ok, false);
    expect(refusedByCard.sent).toBe(true);
    expect(shellView(refusedByCard.state, { disabled: false }).closed).toBe(false);
    expect(submitStep(refusedByCard.state, ok).send).toBe(true);
  });

  it("sends nothing while the page has the form closed", () => {
    expect(submitStep(openShell, { ...ok, disabled: true })).toMatchObject({ send: false, why: "closed" });
    expect(shellView(openShell, { disabled: true })).toMatchObject({ closed: true, actClosed: true });
  });

  it("says what is wrong with a field and sends nothing; the next good submission clears it", () => {
    const bad = submitStep(openShell, { ...ok, problem: "Choose one of the options." });
    expect(bad).toMatchObject({ send: false, why: "invalid" });
    expect(shellView(bad.state, { disabled: false })).toMatchObject({
      closed: false,
      error: "Choose one of the options.",
    });
    const good = submitStep(bad.state, ok);
    expect(good.send).toBe(true);
    expect(good.state.error).toBeNull();
  });

  it("opens again once the page owns the form (its answer went out, or came back refused)", () => {
    const answered = submit(openShell, ok).state;
    const released = releasedStep(answered);
    expect(shellView(released, { disabled: false }).closed).toBe(false);
    expect(submitStep(released, ok).send).toBe(true);
    expect(releasedStep(openShell)).toBe(openShell);
  });
});
