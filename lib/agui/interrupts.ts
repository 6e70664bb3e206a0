import type { Interrupt, ResumeEntry } from "@ag-ui/core";
import { Command } from "@langchain/langgraph";
import { requireId } from "./events";
import { jsonSafe } from "./json";

/** An interrupt as LangGraph reports it in `getState().tasks[].interrupts`. */
export interface LangGraphInterrupt {
  id?: string;
  value?: unknown;
  /** Set when the graph called `interrupt(value, { responseSchema })`. */
  response_schema?: unknown;
}

/**
 * A resume-only `Command`: `resume` keyed by interrupt id, no `update`, no `goto`. Typed that narrowly so it is
 * accepted by any compiled graph's `stream` / `invoke`, whatever its state and node names.
 */
export type ResumeCommand = Command<Record<string, unknown>, Record<string, never>, never>;

/** The resume value a node's `interrupt()` returns when the operator cancelled instead of answering. */
export const CANCELLED_RESUME = Object.freeze({ cancelled: true as const });

/** Whether an `interrupt()` return value is {@link CANCELLED_RESUME} (nodes check this before the answer schema). */
export function isCancelledResume(value: unknown): value is typeof CANCELLED_RESUME {
  return typeof value === "object" && value !== null && (value as { cancelled?: unknown }).cancelled === true;
}

/** How an agent describes one of its interrupt values: its kind, a headline and the JSON Schema of the answer. */
export interface InterruptDescription {
  reason: string;
  message?: string;
  responseSchema?: Record<string, unknown>;
}

/** The agent's reading of a raw interrupt value, or null when the value is outside its contract. */
export type DescribeInterrupt = (value: unknown) => InterruptDescription | null;

/**
 * A LangGraph interrupt → an AG-UI interrupt. The id is LangGraph's, so a resume entry maps straight back to it.
 * When the agent's contract reads the value (`readValue`): `reason` is its kind (our `action`), `message` its
 * headline and `responseSchema` the JSON Schema of the answer. When it does not: `reason` is `"unknown"` and the
 * only schema is one the graph itself declared (`interrupt(value, { responseSchema })`), if any. Either way the raw
 * value travels as `metadata.payload`, so the browser can parse it itself or show it in the fallback view.
 */
export function toAguiInterrupt(interrupt: LangGraphInterrupt, readValue?: DescribeInterrupt): Interrupt {
  const id = requireId(interrupt.id, "LangGraph interrupt");
  const metadata = { payload: jsonSafe(interrupt.value) ?? null };
  const described = readValue?.(interrupt.value);
  if (described) return { id, ...described, metadata };
  const declared = interrupt.response_schema;
  const schema = typeof declared === "object" && declared !== null && !Array.isArray(declared);
  return {
    id,
    reason: "unknown",
    ...(schema ? { responseSchema: jsonSafe(declared) as Record<string, unknown> } : {}),
    metadata,
  };
}

/**
 * AG-UI `resume[]` → `Command({ resume: { [interruptId]: value } })`, one entry per interrupt (LangGraph resumes
 * each pending interrupt by id).
 *
 * - `resolved`: the value is the entry's `payload` (an absent payload resumes with `null`; LangGraph would treat
 *   `undefined` as "no answer" and interrupt again).
 * - `cancelled`: the value is {@link CANCELLED_RESUME}, `{ cancelled: true }`. Dropping the entry instead would make
 *   LangGraph raise the same interrupt again, and the operator's cancel would look like nothing happened; a node
 *   decides what a cancelled question means (usually: take the safe branch, e.g. no refund).
 *
 * Throws on an empty list or a duplicated interrupt id. Whether the entries cover every open interrupt, and whether
 * the payloads are valid answers, is checked by the caller against the decision ledger and the contract.
 */
export function resumeToCommand(resume: readonly ResumeEntry[]): ResumeCommand {
  if (resume.length === 0) throw new Error("agui: resume has no entries");
  const values: Record<string, unknown> = {};
  for (const entry of resume) {
    if (Object.hasOwn(values, entry.interruptId)) {
      throw new Error(`agui: interrupt ${entry.interruptId} is answered twice in one resume`);
    }
    values[entry.interruptId] =
      entry.status === "cancelled" ? { ...CANCELLED_RESUME } : (entry.payload ?? null);
  }
  return new Command<Record<string, unknown>, Record<string, never>, never>({ resume: values });
}
