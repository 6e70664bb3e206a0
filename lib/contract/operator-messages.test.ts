import { operatorMessage, operatorSentence } from "./operator-messages";

const DEVELOPER_WORDS = /[a-z_]+:[a-z_]+|expected|zod|resume/;

describe("operatorMessage", () => {
  it("says a listed code in the operator's words, what to do, and keeps the code as a details line", () => {
    const m = operatorMessage({
      code: "conflict:interrupt_pending",
      message: "The thread is waiting for a decision; answer it with `resume` before sending new input.",
    });
    expect(m.text).toBe("The thread is waiting for a decision, so it cannot take new input now.");
    expect(m.todo).toMatch(/Take the decision first/);
    expect(m.details).toBe("conflict · interrupt_pending");
    expect(`${m.text} ${m.todo} ${m.details}`).not.toMatch(DEVELOPER_WORDS);
  });

  it("keeps the server's plain words (they name who and why) with what to do from the map", () => {
    const m = operatorMessage({
      code: "forbidden:four_eyes_own_thread",
      message: "You sent input to this thread: someone else must approve its refund.",
    });
    expect(m.text).toBe("You sent input to this thread: someone else must approve its refund.");
    expect(m.todo).toBe("Ask a colleague to take this decision.");
  });

  it("reads a length limit out of a validation message", () => {
    expect(
      operatorSentence({
        code: "bad_request:thread",
        message: "The ticket is not valid: Too big: expected string to have <=5000 characters",
      }),
    ).toBe("The text is longer than its limit of 5000 characters. Shorten it.");
  });

  it("never passes a developer's message through: an unlisted code falls back to its type's sentence", () => {
    const m = operatorSentence({
      code: "unprocessable:something_new",
      message: "Too small: expected string to have >=1 characters",
    });
    expect(m).toBe("Some of what was entered is not valid. Check the fields and try again.");
  });

  it("keeps a server message that is already plain words for an unlisted code", () => {
    expect(operatorMessage({ code: "conflict:odd", message: "The order was closed meanwhile." }).text).toBe(
      "The order was closed meanwhile.",
    );
  });

  it("has a sentence for every code the four-eyes rules refuse with", () => {
    for (const code of [
      "forbidden:four_eyes_supervisor",
      "forbidden:four_eyes_own_thread",
      "forbidden:four_eyes_edited",
      "forbidden:four_eyes_both_reviews",
    ]) {
      expect(operatorSentence({ code })).not.toMatch(DEVELOPER_WORDS);
    }
  });
});
