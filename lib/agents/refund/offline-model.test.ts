import { AIMessageChunk } from "@langchain/core/messages";
import { OfflineChatModel, splitIntoTokens } from "./offline-model";
import { classifyPrompt, type ReplyFacts, replyPrompt } from "./prompts";

const facts: ReplyFacts = {
  outcome: "refund_approved",
  customerName: "Anna Schmidt",
  customerMessage: "My mug broke",
  orderId: "ORD-1001",
  amount: "€24.98",
  requested: "€24.98",
  method: "original_payment",
  note: null,
};

describe("offline chat model", () => {
  const model = new OfflineChatModel();

  it("streams a reply in many small chunks that add up to the whole answer", async () => {
    const chunks: AIMessageChunk[] = [];
    for await (const chunk of await model.stream(replyPrompt(facts))) chunks.push(chunk);
    expect(chunks.length).toBeGreaterThan(10);
    expect(chunks.every((c) => c instanceof AIMessageChunk && c.text.length <= 40)).toBe(true);
    const text = chunks.map((c) => c.text).join("");
    expect(text).toContain("Hello Anna Schmidt");
    expect(text).toContain("approved your refund of €24.98");
    expect(text).toBe((await model.invoke(replyPrompt(facts))).text);
  });

  it("answers the classifier prompt with the rules' JSON", async () => {
    const answer = await model.invoke(
      classifyPrompt("Refund €12.50 for ord-1003 please, it arrived damaged"),
    );
    expect(JSON.parse(answer.text)).toEqual({
      intent: "refund",
      reason: "item arrived damaged",
      orderRef: "ORD-1003",
      requestedAmount: 12.5,
    });
  });

  it("has a template per outcome", async () => {
    const rejected = await model.invoke(
      replyPrompt({ ...facts, outcome: "refund_rejected", note: "Too late." }),
    );
    expect(rejected.text).toContain("rejected");
    expect(rejected.text).toContain("Reason: Too late.");
    const credit = await model.invoke(replyPrompt({ ...facts, method: "store_credit" }));
    expect(credit.text).toContain("store credit");
    const question = await model.invoke(replyPrompt({ ...facts, outcome: "question", amount: null }));
    expect(question.text).toContain("Thank you for your message");
  });

  it("splits text without losing a character", () => {
    const text = "Hello there,\n\nline two  with  spaces.\n";
    expect(splitIntoTokens(text).join("")).toBe(text);
    expect(splitIntoTokens(text).length).toBeGreaterThan(1);
  });
});
