import { validateAnswer } from "@/lib/contract/questions";
import { normalizeOrderRef, ORDER_REF_PATTERN } from "./classify-rules";

describe("the order number an operator types", () => {
  const question = {
    action: "input_text" as const,
    title: "Which order?",
    question: "Which order is this about?",
    minLength: 1,
    maxLength: 500,
    pattern: ORDER_REF_PATTERN,
    patternHint: "An order number like ORD-1234",
  };

  it("is accepted in any letter case and normalized to upper case", () => {
    for (const text of ["ORD-1003", "ord-1003", "Ord-1003"]) {
      expect(validateAnswer(question, { text }).ok).toBe(true);
      expect(normalizeOrderRef(text)).toBe("ORD-1003");
    }
  });

  it("is refused when it is not an order number", () => {
    for (const text of ["1003", "ORD-103", "ORD-10033", "order 1003"]) {
      expect(validateAnswer(question, { text }).ok).toBe(false);
    }
  });
});
