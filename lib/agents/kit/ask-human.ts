import "server-only";
import type { RunnableConfig } from "@langchain/core/runnables";
import { getConfig, interrupt } from "@langchain/langgraph";
import { canonicalPayload } from "@/lib/contract/canonical-json";
import { AppError } from "@/lib/contract/errors";
import {
  type AnswerOf,
  type InterruptAction,
  interruptPayload,
  type PayloadOf,
  validateAnswer,
} from "@/lib/contract/questions";

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
    // Given an answer: it must be to this very question, as the ledger recorded it when it was asked.
    refuseChangedQuestion(checked);
    const result = validateAnswer(checked, raw);
    if (result.ok) return { answer: result.answer as AnswerOf[A], ref: decisionRef(getConfig(), asked) };
    console.warn(`[graph] invalid answer to ${checked.action}, asking again: ${result.error}`);
  }
}

/**
 * A resumed step is handed the answer to a question the ledger recorded (`expected_interrupts`, set for resume runs).
 * If the question it asks now is none of those — the graph or the state it reads changed under the paused thread,
 * e.g. a deploy renamed the field the amount comes from without a new version — the answer is not for it: stop with
 * `conflict:interrupt_changed` (the thread needs attention) before anything after the question runs.
 */
function refuseChangedQuestion(payload: unknown): void {
  const expected = getConfig().configurable?.expected_interrupts;
  if (!Array.isArray(expected) || expected.length === 0) return;
  if (expected.includes(canonicalPayload(payload))) return;
  throw new AppError(
    "conflict:interrupt_changed",
    "The question this step asks is not the one that was answered: the graph or its state changed since. Nothing after it ran; a supervisor must look at this thread.",
    { action: (payload as { action?: unknown }).action },
  );
}

/** `askHumanDecision` when the caller needs only the answer. */
export function askHuman<A extends InterruptAction>(payload: PayloadOf<A>): AnswerOf[A] {
  return askHumanDecision(payload).answer;
}
