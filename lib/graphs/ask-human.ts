import "server-only";
import type { RunnableConfig } from "@langchain/core/runnables";
import { getConfig, interrupt } from "@langchain/langgraph";
import {
  type AnswerOf,
  type InterruptAction,
  interruptPayload,
  type PayloadOf,
  validateAnswer,
} from "@/lib/interrupts";

/**
 * A stable reference to the decision taken in the running step: its thread, its task namespace (`node:<task id>`,
 * the task id derived from the checkpoint the step runs from) and, after `answered` earlier answers in the same
 * task, that count. It is what LangGraph derives the step's interrupt id from (a hash of the same namespace and
 * count, not exported), so it names one interrupt — one decision — exactly: a resumed or recovered step gets the same
 * reference, a fork or a new message a new one. Effect idempotency keys derive from it.
 */
export function decisionRef(config: RunnableConfig, answered = 0): string {
  const ns = config.configurable?.checkpoint_ns;
  const threadId = config.configurable?.thread_id;
  if (typeof ns !== "string" || ns === "" || typeof threadId !== "string") {
    throw new Error("decisionRef: called outside a graph step (no thread_id / checkpoint_ns)");
  }
  return `${threadId}/${answered === 0 ? ns : `${ns}|${answered}`}`;
}

/**
 * Pause for a human with a contract payload and return their validated answer, with the reference of the decision
 * that gave it (`decisionRef`). The server validates answers before resuming, but the graph never trusts its input:
 * an answer that does not fit the payload is not acted on — the same question is asked again (a new interrupt of
 * this node). Call it first in a node, with nothing before it that writes anywhere: LangGraph re-runs the node from
 * the top on every resume.
 */
export function askHumanDecision<A extends InterruptAction>(
  payload: PayloadOf<A>,
): { answer: AnswerOf[A]; ref: string } {
  // Our own payload must fit the contract, or the console would show it in its fallback view: fail loudly instead.
  const checked = interruptPayload.parse(payload);
  for (let asked = 0; ; asked += 1) {
    const raw: unknown = interrupt(checked);
    const result = validateAnswer(checked, raw);
    if (result.ok) return { answer: result.answer as AnswerOf[A], ref: decisionRef(getConfig(), asked) };
    console.warn(`[graph] invalid answer to ${checked.action}, asking again: ${result.error}`);
  }
}

/** `askHumanDecision` when the caller needs only the answer. */
export function askHuman<A extends InterruptAction>(payload: PayloadOf<A>): AnswerOf[A] {
  return askHumanDecision(payload).answer;
}
