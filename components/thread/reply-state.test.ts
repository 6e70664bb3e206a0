import type { EffectView } from "@/lib/contract/wire";
import { replyState } from "./conversation";

/* The reply's label says what the email effect is now, not what the step that queued it saw. */
const effect = (status: EffectView["status"], resolution?: string): EffectView => ({
  id: "e-1",
  kind: "email",
  idempotencyKey: "email:x",
  recordId: "o-1",
  status,
  attempts: 1,
  lastError: null,
  providerRef: null,
  simulated: false,
  summary: "Email “Your refund” to ada@example.com",
  createdAt: new Date(0).toISOString(),
  nextAttemptAt: null,
  deliveredAt: null,
  task: resolution ? ({ resolution } as EffectView["task"]) : null,
});
const values = { reply: { body: "Hello" }, email: { status: "queued", effectId: "e-1" } };

describe("the reply's label", () => {
  it("is queued until the email is delivered, and says so when it failed or is unconfirmed", () => {
    expect(replyState(values, [])?.label).toBe("Agent — reply queued for the customer");
    expect(replyState(values, [effect("queued")])?.label).toBe("Agent — reply queued for the customer");
    expect(replyState(values, [effect("sending")])?.label).toBe("Agent — reply queued for the customer");
    expect(replyState(values, [effect("delivered")])?.label).toBe("Agent — reply sent to the customer");
    expect(replyState(values, [effect("handled", "confirmed_delivered")])?.label).toBe(
      "Agent — reply sent to the customer",
    );
    expect(replyState(values, [effect("failed")])?.label).toMatch(/not delivered/);
    expect(replyState(values, [effect("unconfirmed")])?.label).toMatch(/not confirmed/);
    expect(replyState({ reply: { body: "Hello" } })?.label).toBe("Draft reply — not sent yet");
  });
});
