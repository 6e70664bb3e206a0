import type { RunnableConfig } from "@langchain/core/runnables";
import type { BaseCheckpointSaver, StateSnapshot } from "@langchain/langgraph";
import type { z } from "zod";
import type { Principal } from "@/lib/contract/roles";
import type { SideEffectWarning } from "@/lib/contract/views/history";
import type { Authorization, DecisionSummary, MultitaskStrategy } from "@/lib/contract/wire";
import type { AppDb } from "@/lib/db/open";
import type { InvolvedPrincipal } from "@/lib/db/queries/involved";
import type { Queryable } from "@/lib/db/tx";

/*
 * What the runtime needs to know about an agent, and nothing more: an agent brings its graph and its rules through one
 * `AgentDefinition`; `lib/runtime`, `lib/agui`, `lib/db` and `lib/checkpoint` never import an agent. Types only: the
 * registry is lib/runtime/agents/registry.ts (which re-exports these).
 */

/** The parts of a compiled LangGraph graph the runtime calls. */
export interface AgentGraph {
  getState(config: RunnableConfig): Promise<StateSnapshot>;
  updateState(config: RunnableConfig, values: unknown, asNode?: string): Promise<RunnableConfig>;
  stream(input: unknown, options: Record<string, unknown>): Promise<AsyncIterable<unknown>>;
}

/** An interrupt value read against the agent's contract. */
export type ParsedPayload<P> =
  | { ok: true; payload: P; action: string; title: string }
  | { ok: false; error: string };

/** A recorded side effect that a branch from some checkpoint would reach again (the browser shows it too). */
export type { DecisionSummary, SideEffectWarning };

/** What an agent's `effects` is asked about: the state at a checkpoint of one thread. */
export interface EffectsArgs {
  db: Queryable;
  threadId: string;
  values: Record<string, unknown>;
}

/** A decision being taken, as the agent's policy sees it. */
export interface DecisionAttempt<P> {
  interruptId: string;
  payload: P;
  /** The answer as the contract parsed it. */
  answer: unknown;
  principal: Principal;
  /** Who supplied input that led to this request (`listInvolvedPrincipals`). */
  involved: InvolvedPrincipal[];
  /** Decisions of the same super-step already answered (parallel approvals), with who answered them. */
  siblings: { interruptId: string; action: string; answer: unknown; resolvedById: string | null }[];
  /**
   * The thread's decisions already taken, with who took them (read only for an answer that acts on the world): e.g.
   * whoever approved a change may not also end its cooling-off early.
   */
  decided: { interruptId: string; action: string; answer: unknown; resolvedById: string | null }[];
}

export interface AgentDefinition<P = unknown> {
  /** Stable id, stored on every thread (`refund`, `account_change`). */
  id: string;
  /** For people: the new-ticket form and the thread page. */
  title: string;
  description: string;
  /**
   * Declared version of the graph: bump it when nodes, edges, interrupt points or state channels change, and keep
   * the previous definition registered (a versions folder next to the graph) until no thread uses it.
   */
  version: string;
  /**
   * Content hash of the graph's structure (`structureHash` in lib/runtime/agents/graph-structure.ts): a test compares it
   * with the built graph, so a structural change without a version bump fails before it is deployed.
   */
  structureHash: string;
  /** Nodes that raise interrupts (part of the structure: moving a question is a new version). */
  interruptNodes: readonly string[];
  /**
   * The kinds of question it asks (`lib/contract/questions/kinds.ts`: `tool_review` for the standard interrupts of LangChain's
   * review middleware and agent-inbox). The registry test checks the console can label, summarize, bulk-decide and
   * pre-check every one of them for this agent, so no place is left silently incomplete.
   */
  asks: readonly string[];
  /**
   * Declared moves of paused threads from older versions onto this one: the old state and pending interrupts in, the
   * state update to apply (as `asNode`) out. Run once, recorded as a checkpoint with `source: "migration"`, audited.
   */
  migrations?: AgentMigration[];
  /** The compiled graph on this process's checkpointer and database (the agent picks its own model, if any). */
  build(deps: { checkpointer: BaseCheckpointSaver; db: AppDb }): AgentGraph;
  /**
   * What a ticket for this agent holds: the new-ticket page's fields, `POST /api/threads` and its 400s are derived from
   * it (lib/runtime/runs/intake.ts). Nothing about a ticket is fixed by the console but its `message`.
   */
  intake: AgentIntake;
  /**
   * The state update a customer message starts (or continues) a thread with: `text` is the message, `ticket` the
   * fields the thread was filed with, as `intake.schema` read them.
   */
  input(message: { messageId: string; text: string; ticket: Record<string, unknown> }): unknown;
  /** The interrupt contract: how the agent's interrupt values read, are answered and are summarized. */
  interrupts: {
    parse(raw: unknown): ParsedPayload<P>;
    /** Validate an answer against the payload it answers: the parsed answer, or why not. */
    validate(payload: P, answer: unknown): { ok: true; answer: unknown } | { ok: false; error: string };
    /** AG-UI `Interrupt.responseSchema`: the JSON Schema of the answer. */
    responseSchema(payload: P): Record<string, unknown>;
    summarize(raw: unknown): DecisionSummary;
    /**
     * The answer to this payload that acts on the world (approve, send, grant), or null when none does. Lets the
     * console ask the policy before the click whether someone may give it (`lib/runtime/agents/may-decide.ts`).
     */
    actingAnswer?(payload: P): unknown;
    /**
     * The effects an answer authorizes as the question shows them (a refund of this amount to this order, this
     * account's field to this value, a voucher): written into the decision's receipt (lib/runtime/runs/receipts.ts).
     */
    authorizes?(payload: P, answer: unknown): Authorization[];
    /**
     * The question as the ledgers say it now, not as it was asked (what is left to refund on an order another line of
     * the thread refunded since, with a finding that says so): what the page offers and what an answer is validated
     * against, on every surface. Default: the payload as asked.
     */
    current?(args: { db: Queryable; payload: P }): Promise<P>;
  };
  /** Time travel: which state a fork may edit, and as which nodes. */
  fork: {
    editable: z.ZodType<Record<string, unknown>>;
    editableFields: readonly string[];
    asNodes: readonly string[];
    /** The state update that marks a branch as edited by a principal (written by the runtime, never by the edit). */
    markEdited(principalId: string): Record<string, unknown>;
    /**
     * What the edits may not be given the state at the checkpoint and the world (an amount above the order's total):
     * each a field and its rule in the agent's words. The fork and its check both refuse them (422), before anything
     * is written. Default: none beyond `editable`.
     */
    limits?(args: {
      db: Queryable;
      state: Record<string, unknown>;
      values: Record<string, unknown>;
    }): Promise<{ field: string; message: string }[]>;
  };
  /** Side effects a branch from a checkpoint (with these values) would reach again: warned before a fork. */
  effects(args: EffectsArgs): Promise<SideEffectWarning[]>;
  /** Who may take which decision: throws an AppError (403) to refuse. Rejections usually pass. */
  policy(attempt: DecisionAttempt<P>): void;
  /**
   * Personal data in this agent's state, as dot paths (`customerMessage`, `change.to`): erasure replaces their values
   * wherever the customer's threads hold them (lib/runtime/retention/erasure.ts). The customer's name and email are erased
   * everywhere anyway.
   */
  personalData?: readonly string[];
  /** Whether this answer acts on the world (approves, sends): the runtime collects `involved` only for those. */
  actsOnIt(payload: P, answer: unknown): boolean;
  /**
   * The effects an answer authorizes beyond what its contract says (`interrupts.authorizes`), e.g. what a reviewed tool
   * call does — written into the decision's receipt (lib/runtime/runs/receipts.ts). The ledger records a refund, an account
   * change or a voucher only by spending a matching authorization of the thread; the dispatcher delivers it only if
   * the receipt still matches. Default: none.
   */
  authorizes?(payload: P, answer: unknown): Authorization[];
  /**
   * Interrupt actions for which a system principal (a deadline's expiry, a migration, a tool) may give an acting
   * answer. Default: none — a system may reject, cancel, hold or escalate, never approve, send or grant
   * (lib/runtime/agents/system-policy.ts). Checked when an expiry answer is configured and again when it is applied.
   */
  systemMayAct?: readonly string[];
  /** What a thread is about, read from its state (for the inbox when a payload does not say). */
  context(values: Record<string, unknown>): {
    orderId: string | null;
    customerName: string | null;
    /**
     * The money the thread's open question is about when its payload does not say it (a refund's method question,
     * "how should Ann get €120.00 back?"): the inbox's amount. Omitted when no money is at stake there.
     */
    amount?: { amountCents: number; currency: string } | null;
    /** The thread's money (its order's currency): the currency of an amount a question names without one. */
    currency?: string | null;
  };
  /**
   * Tickets (as `intake.schema` reads them) that bring a thread of this agent to its questions: the generated policy
   * and flow suites (e2e/agents/) file them, walk every question they reach and check that every interrupt node is
   * reached. Without them the suites file `{ message }` with a generic message.
   */
  examples?: readonly Record<string, unknown>[];
  /** Extra `configurable` keys for a run (e.g. chaos delays). */
  configurable?: Record<string, unknown>;
  /**
   * What new input does while a run of the thread is active (double texting, `MULTITASK_STRATEGIES` in lib/contract/wire.ts):
   * `reject` (the default: 409 `conflict:run_active`), `enqueue`, `interrupt` or `rollback` (lib/runtime/runs/queued-inputs.ts).
   */
  multitask?: MultitaskStrategy;
}

/**
 * The fields of a ticket for one agent. `schema` is a zod object with at least `message` (the customer's words: the
 * thread's text, its title and the first run's message); every other field is the agent's own. A field's `.meta()`
 * may give the form a `title`, a `description` and a `widget` (`textarea`, or `order` for a pick from the shop's
 * orders).
 */
export interface AgentIntake {
  schema: z.ZodType<{ message: string } & Record<string, unknown>>;
  /**
   * The order the ticket was filed with, if it names one: shown in the inbox, searched, and what an agent's identity
   * check may trust as "the ticket system tied the sender to it" (`threads.order_ref`).
   */
  order?(ticket: Record<string, unknown>): string | null;
}

/** A declared migration from an older version of the same agent. */
export interface AgentMigration {
  from: string;
  /** Why, for the audit trail and the console ("human_review renamed to review_refund"). */
  description: string;
  /**
   * The state update that moves a thread paused at `pendingNodes` (the nodes whose questions wait) onto this
   * version, written as `asNode` (the new graph continues from that node's edges and asks again); or null when this
   * migration does not apply to such a thread, which then stays pinned to its version.
   */
  migrate(old: { values: Record<string, unknown>; pendingNodes: string[] }): {
    values: Record<string, unknown>;
    asNode: string;
  } | null;
}
