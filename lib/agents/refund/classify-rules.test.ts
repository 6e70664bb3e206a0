import { classifyByRules, extractOrderRef, normalizeOrderRef, parseRequestedCents } from "./classify-rules";
import { parseClassification } from "./prompts";

describe("classification rules", () => {
  it("finds order references in any case and normalizes them", () => {
    expect(extractOrderRef("about ord-1003, thanks")).toBe("ORD-1003");
    expect(extractOrderRef("ORD-12345 is not one")).toBeNull();
    expect(normalizeOrderRef(" Ord-1001 ")).toBe("ORD-1001");
    expect(normalizeOrderRef("ORD-1")).toBeNull();
  });

  it.each([
    ["Please refund €25", 2500],
    ["I want 25 EUR back", 2500],
    ["refund 25.50 please", 2550],
    ["€ 25,50 would be fair", 2550],
    ["the full €1,299.00", 129900],
    ["1.299,00 € bitte", 129900],
    ["19 euros", 1900],
  ])("reads the amount in %j", (text, cents) => {
    expect(parseRequestedCents(text)).toBe(cents);
  });

  it("does not read order numbers, quantities or dates as amounts", () => {
    expect(parseRequestedCents("Refund ORD-1003 please, I bought 3 mugs on 12 May")).toBeNull();
  });

  it("tells refund requests from other questions", () => {
    expect(classifyByRules("Can I get my money back for ORD-1001?")).toMatchObject({
      intent: "refund",
      orderRef: "ORD-1001",
      requestedCents: null,
    });
    expect(classifyByRules("ORD-1002 arrived broken, I'd like €30").intent).toBe("refund");
    expect(classifyByRules("Do you ship to Norway?")).toMatchObject({ intent: "other", orderRef: null });
    expect(classifyByRules("The parcel never arrived, refund ORD-1009").reason).toBe("order not received");
  });
});

describe("reading a model's classification", () => {
  const message = "Refund €10 for ORD-1001, it is broken";

  it("takes JSON wrapped in prose or fences, converting the amount to cents", () => {
    const text =
      'Sure:\n```json\n{"intent":"refund","reason":"broken","orderRef":"ord-1001","requestedAmount":"10.5"}\n```';
    expect(parseClassification(text, message)).toEqual({
      intent: "refund",
      reason: "broken",
      orderRef: "ORD-1001",
      requestedCents: 1050,
    });
  });

  it("keeps the order number from the message when the model misses it", () => {
    const text = '{"intent":"refund","reason":"broken","orderRef":null,"requestedAmount":null}';
    expect(parseClassification(text, message).orderRef).toBe("ORD-1001");
  });

  it("falls back to the rules on anything else", () => {
    const rules = classifyByRules(message);
    expect(parseClassification("no JSON here", message)).toEqual(rules);
    expect(parseClassification("{not json}", message)).toEqual(rules);
    expect(parseClassification('{"intent":"maybe","reason":"x"}', message)).toEqual(rules);
  });
});
