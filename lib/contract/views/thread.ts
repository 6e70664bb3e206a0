import type { Message } from "@ag-ui/core";
import type { EffectView, ReceiptView } from "../wire";

/*
 * A thread as the console and API clients read it (`GET /api/threads/{threadId}`): its state, pending questions,
 * decisions, effects and receipts. Types only: the server builds it in lib/runtime/views/thread-view.ts.
 */

/** A pending interrupt as the console and API clients see it. */
export interface PendingInterruptView {
  interruptId: string;
  /** The payload's action, or "unknown" when it does not fit the contract (render the fallback view). */
  action: string;
  /** The typed payload when it fits the contract. */
  payload: unknown;
  /** The raw interrupt value (for the fallback view). */
  raw: unknown;
  /** Why the payload did not fit the contract. */
  invalid?: string;
  raisedAt: string | null;
  /** Already answered (its sibling decisions are still pending, so the run has not resumed): who and when. */
  answeredBy?: string;
  answeredAt?: string;
}

export interface DecisionView {
  interruptId: string;
  action: string;
  status: string;
  answer: unknown;
  resolvedBy: string | null;
  resolvedAt: string | null;
  checkpointId: string;
  /** When it is (or was) due (ISO 8601). */
  dueAt: string;
  /** When it was escalated for being overdue, or null. */
  escalatedAt: string | null;
  /** Who the escalation went to (each notification target), for an escalated decision. */
  escalatedTo: { kind: string; target: string; status: string }[];
}

export interface ThreadView {
  threadId: string;
  /** Whether the thread was ever forked (a run of kind `fork`): only then can its branches disagree. */
  forked: boolean;
  /**
   * The customer's personal data was erased (their key destroyed): what the agent held of the thread (its state, its
   * messages) is gone for good; what reads empty is erased, not missing.
   */
  erased: boolean;
  /**
   * The head's branch was made to answer a decision otherwise ("Answer differently", the latest fork): which decision,
   * how and by whom it was answered on the other line, and that line's head (to set the two outcomes side by side).
   */
  answeringDifferently: {
    interruptId: string;
    action: string;
    answer: unknown;
    resolvedBy: string | null;
    resolvedAt: string | null;
    otherHead: string | null;
    /**
     * The pending question on this branch that asks it again (same kind, same question — one of several parallel
     * questions of one kind is told apart by what it asks); null once it is answered.
     */
    askedAgain: string | null;
  } | null;
  /** The agent that handles the thread (`AgentDefinition.id`) and the version it is pinned to. */
  agentId: string;
  agentVersion: string;
  /** Why a supervisor must act (status `needs_attention`), with what they can do; null otherwise. */
  attention: { reason: string; currentVersion: string | null; canMigrate: boolean } | null;
  title: string;
  customerMessage: string;
  orderRef: string | null;
  /** The fields the ticket was filed with, as its agent's intake read them (`message` and the agent's own). */
  ticket: Record<string, unknown>;
  /** The ticket's own fields for people (not the message or the order): label and value, in the agent's order. */
  ticketLines: { name: string; label: string; value: string }[];
  /** idle | running | interrupted | completed | failed */
  status: string;
  activeRunId: string | null;
  values: Record<string, unknown>;
  messages: Message[];
  /** Read from `getState().tasks[].interrupts` (never from `next`), validated through the contract. */
  pendingInterrupts: PendingInterruptView[];
  decisions: DecisionView[];
  /**
   * The thread's side effects with their live delivery status (the graph state says `queued`; this says whether
   * the provider has it), attempts, last error and, for a failed one, its operator task.
   */
  effects: EffectView[];
  /** The decisions' receipts (what each authorized, who, how), each checked: lib/runtime/runs/receipts.ts. */
  receipts: ReceiptView[];
  /** A failed thread's reason: the error its last run ended with (code and server message); null otherwise. */
  failure?: { code: string; message: string } | null;
  /**
   * New input waiting to run after the active run or the pending decisions (double texting, the agent's `enqueue` /
   * `interrupt` / `rollback`), oldest first: the run id it will start as, its text, who sent it and when.
   */
  queuedInputs: { runId: string; text: string; from: string; strategy: string; at: string }[];
  lastSeq: number;
  checkpointId: string | null;
  updatedAt: string;
}
