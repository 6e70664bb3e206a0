import { readableError } from "./readable-error";

describe("readableError", () => {
  it("turns zod's own wording into sentences", () => {
    expect(readableError("✖ Too small: expected string to have >=1 characters\n  → at note")).toBe(
      "A required field is empty.",
    );
    expect(readableError("✖ Too big: expected string to have <=200 characters\n  → at subject")).toBe(
      "A field is longer than its limit of 200 characters.",
    );
  });

  it("keeps the contract's own messages", () => {
    expect(readableError("✖ say why the refund is rejected\n  → at note")).toBe(
      "Say why the refund is rejected.",
    );
  });
});
