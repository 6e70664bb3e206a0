import "server-only";
import {
  answerJsonSchema,
  type InterruptPayload,
  parseInterruptPayload,
  summarizePayload,
  validateAnswer,
} from "@/lib/contract/questions";
import { QUESTION_KINDS } from "@/lib/contract/questions/kinds";
import type { Authorization } from "@/lib/contract/wire";
import type { AgentDefinition } from "@/lib/runtime/agents/registry";

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
  // From the question kinds: the answer that acts, whose policy the console asks before the click.
  actingAnswer: (payload) =>
    (QUESTION_KINDS[payload.action].actingAnswer as (p: InterruptPayload) => unknown)(payload),
  // From the question kinds: what an answer authorizes, for its receipt.
  authorizes: (payload, answer) =>
    (
      QUESTION_KINDS[payload.action].authorizes as (
        p: InterruptPayload,
        a: Record<string, unknown>,
      ) => Authorization[]
    )(payload, answer !== null && typeof answer === "object" ? (answer as Record<string, unknown>) : {}),
};
