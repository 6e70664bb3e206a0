import { randomUUID } from "node:crypto";
import type { BaseMessage } from "@langchain/core/messages";
import { type ChatRequest, type FakeOpenAI, startFakeOpenAI } from "@/e2e/support/fake-openai";
import {
  expectWaitingFor,
  newThread,
  openRefundHarness,
  type RefundHarness,
  valuesOf,
} from "@/e2e/support/refund-harness";
import { createOpenAiChatModel } from "./chat-model";
import { refundGraphInput } from "./graph";
import { CLASSIFY_TASK, REPLY_TASK } from "./prompts";

const REPLY_TOKENS = [
  "Hello",
  " Anna",
  ",",
  " your",
  " refund",
  " of",
  " €20.00",
  " is",
  " on",
  " its",
  " way",
  ".",
];

const systemPrompt = (request: ChatRequest) =>
  String(request.messages.find((m) => m.role === "system")?.content);

describe("refund graph with ChatOpenAI against a local OpenAI-compatible server", () => {
  let fake: FakeOpenAI;
  let h: RefundHarness;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    const model = createOpenAiChatModel({
      apiKey: "test",
      baseURL: fake.baseURL,
      model: "fake-model",
      maxRetries: 0,
    });
    h = await openRefundHarness("postgres", model);
  });
  afterAll(async () => {
    await h?.close();
    await fake?.close();
  });

  it("classifies through the model and streams the reply token by token", async () => {
    fake.setReply((request) =>
      systemPrompt(request).includes(CLASSIFY_TASK)
        ? '```json\n{"intent":"refund","reason":"mug arrived chipped","orderRef":"ord-1001","requestedAmount":20}\n```'
        : REPLY_TOKENS,
    );
    const config = newThread();
    const input = refundGraphInput({
      messageId: randomUUID(),
      customerMessage: "Hi! One of the mugs I got is chipped. Could I have 20 euros back? Order ORD-1001.",
    });
    const chunks: { node: unknown; message: BaseMessage }[] = [];
    for await (const [message, metadata] of await h.graph.stream(input, {
      ...config,
      streamMode: "messages",
    })) {
      chunks.push({ node: (metadata as Record<string, unknown>).langgraph_node, message });
    }

    // The classifier request reached the fake, streamed, and its JSON stayed out of the message stream.
    expect(fake.requests.map((r) => systemPrompt(r).includes(CLASSIFY_TASK))).toEqual([true, false]);
    expect(fake.requests.every((r) => r.stream === true)).toBe(true);
    expect(systemPrompt(fake.requests[1]!)).toContain(REPLY_TASK);
    expect(chunks.filter((c) => c.node === "classify")).toEqual([]);

    // Each token the fake sent is its own message chunk, all under one message id.
    const replyChunks = chunks.filter((c) => c.node === "write_reply" && c.message.text !== "");
    expect(replyChunks.map((c) => c.message.text)).toEqual(REPLY_TOKENS);
    expect(new Set(replyChunks.map((c) => c.message.id)).size).toBe(1);

    const values = await valuesOf(h.graph, config);
    expect(values.reason).toBe("mug arrived chipped");
    expect(values.orderRef).toBe("ORD-1001");
    expect(values.requested).toBe(2000);
    expect(values.reply?.body).toBe(REPLY_TOKENS.join(""));
    expect(values.messages.at(-1)?.id).toBe(replyChunks[0]?.message.id);
    const email = await expectWaitingFor(h.graph, config, "confirm_email");
    expect(email.body).toBe(REPLY_TOKENS.join(""));
  });

  it("falls back to the rules when the classifier's answer is not JSON", async () => {
    fake.setReply((request) =>
      systemPrompt(request).includes(CLASSIFY_TASK) ? "I think this is about a refund." : "Noted.",
    );
    const config = newThread();
    await h.graph.invoke(
      refundGraphInput({
        messageId: randomUUID(),
        customerMessage: "Refund ORD-1003 please, wrong size. €15",
      }),
      config,
    );
    const values = await valuesOf(h.graph, config);
    expect(values).toMatchObject({ intent: "refund", orderRef: "ORD-1003", reason: "wrong item delivered" });
    expect(values.requested).toBe(1500);
  });
});
