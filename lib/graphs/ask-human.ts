import "server-only";
import { interrupt } from "@langchain/langgraph";
import {
  type AnswerOf,
  type InterruptAction,
  interruptPayload,
  type PayloadOf,
  validateAnswer,
} from "@/lib/interrupts";

/**
 * Pause for a human with a contract payload and return their validated answer. The server validates answers before
 * resuming, but the graph never trusts its input: an answer that does not fit the payload is not acted on — the same
 * question is asked again (a new interrupt of this node). Call it first in a node, with nothing before it that
 * writes anywhere: LangGraph re-runs the node from the top on every resume.
 */
export function askHuman<A extends InterruptAction>(payload: PayloadOf<A>): AnswerOf[A] {
  // Our own payload must fit the contract, or the console would show it in its fallback view: fail loudly instead.
  const checked = interruptPayload.parse(payload);
  for (;;) {
    const raw: unknown = interrupt(checked);
    const result = validateAnswer(checked, raw);
    if (result.ok) return result.answer as AnswerOf[A];
    console.warn(`[refund] invalid answer to ${checked.action}, asking again: ${result.error}`);
  }
}
