import "server-only";
import {
  answerJsonSchema,
  type InterruptPayload,
  parseInterruptPayload,
  summarizePayload,
  validateAnswer,
} from "@/lib/interrupts";
import type { AgentDefinition } from "@/lib/runtime/agent";

/** The shared interrupt contract (`lib/interrupts`) as an agent's `interrupts`: for agents whose actions are in it. */
export const sharedContract: AgentDefinition<InterruptPayload>["interrupts"] = {
  parse(raw) {
    const parsed = parseInterruptPayload(raw);
    return parsed.ok
      ? { ok: true, payload: parsed.payload, action: parsed.payload.action, title: parsed.payload.title }
      : { ok: false, error: parsed.error };
  },
  validate: (payload, answer) => validateAnswer(payload, answer),
  responseSchema: (payload) => answerJsonSchema(payload),
  summarize: (raw) => summarizePayload(raw),
  actingAnswer: (payload) => ACTING_ANSWERS[payload.action] ?? null,
};

/** Per action, the answer that makes something happen (the one four-eyes and roles are checked for). */
const ACTING_ANSWERS: Partial<Record<InterruptPayload["action"], unknown>> = {
  refund_approval: { decision: "approve" },
  confirm_email: { choice: "send" },
  review_change: { decision: "approve" },
  goodwill_voucher: { decision: "grant" },
};
