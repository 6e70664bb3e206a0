import "server-only";
import type { LLMResult } from "@langchain/core/outputs";
import type { RunnableConfig } from "@langchain/core/runnables";
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import { BaseTracer, type Run as TracedCall } from "@langchain/core/tracers/base";
import { interrupt } from "@langchain/langgraph";
import { type SQL, sql } from "drizzle-orm";
import {
  BUDGET_LIMIT_LABELS,
  type BudgetLimit,
  formatBudget,
  type RunBudgetAnswer,
  type RunBudgetPayload,
} from "@/lib/contract/budget-contract";
import { canonicalPayload } from "@/lib/contract/canonical-json";
import { AppError } from "@/lib/contract/errors";
import { rowsOf } from "@/lib/db/rows";
import type { Thread } from "@/lib/db/schema";
import type { Queryable } from "@/lib/db/tx";
import { openThreadJson, openThreadText } from "@/lib/db/vault";
import { env } from "@/lib/platform/env";
import { tokenUsage } from "@/lib/runtime/runs/graph-callbacks";
import { RUN_CANCELLED, stoppedMessage } from "./cancel-reason";

/*
 * Spending limits (issue: run control). Every run is held to a token budget of its own and of its thread (and a cost
 * budget when the model's price is configured). The runtime counts what each model call reports and, at the next
 * model call past a limit, pauses the run with a `run_budget` question — an interrupt like any other, raised from
 * inside the node that calls the model, so it goes through the ledger, the claim, the audit and the deadlines. No agent
 * code is involved: the gate is a callback handler the executor passes to every run.
 *
 * The answer is the thread's: "raise" sets a new limit (the ledger's latest raise of a limit is the limit in force for
 * the thread's later runs), "stop" ends the run as stopped. When the resumed node runs again, the gate hands the answer
 * back at the same place in the node's sequence of questions, so no other question of the node is given it.
 */

/** What LangGraph keeps for a running node: how many of its questions were asked, and the answers it already has. */
interface Scratchpad {
  interruptCounter: number;
  resume: unknown[];
  nullResume?: unknown;
}
const SCRATCHPAD = "__pregel_scratchpad";
const CHECKPOINTER = "__pregel_checkpointer";
const GATE_NAME = "hitl_budget_gate";

export type Limits = Record<BudgetLimit, number>;

/** The model's price in dollars per million input and output tokens (`MODEL_PRICE_PER_MTOK`). */
export interface Price {
  input: number;
  output: number;
}

/** The deployment's limits (0 = none). Cost limits in millionths of a dollar, and only with a price. */
export function deploymentLimits(): Limits {
  const priced = !!env.MODEL_PRICE_PER_MTOK;
  return {
    run_tokens: env.RUN_TOKEN_BUDGET,
    thread_tokens: env.THREAD_TOKEN_BUDGET,
    run_cost_micros: priced ? Math.round(env.RUN_COST_BUDGET_USD * 1_000_000) : 0,
    thread_cost_micros: priced ? Math.round(env.THREAD_COST_BUDGET_USD * 1_000_000) : 0,
  };
}

/** Millionths of a dollar for these tokens at the configured price (dollars per million tokens), or undefined. */
export function costMicros(
  tokensIn: number,
  tokensOut: number,
  price: Price | null = env.MODEL_PRICE_PER_MTOK ?? null,
): number | undefined {
  // Dollars per million tokens × tokens = millionths of a dollar.
  return price ? Math.round(tokensIn * price.input + tokensOut * price.output) : undefined;
}

/** A budget answer in a thread's ledger: which limit it answered, the answer, and who gave it. */
export interface BudgetDecision {
  limit: BudgetLimit;
  answer: RunBudgetAnswer;
  by: string;
}

/** What a thread spent before a run, and the budget answers its ledger holds. */
export interface ThreadSpending {
  tokensIn: number;
  tokensOut: number;
  decisions: BudgetDecision[];
}

/** What a run's start reads of its thread: its spending and what its graph input needs. */
export type StartRead = ThreadSpending & RunContextRead;

/** What a run needs to know of its thread before it starts, besides its spending (see {@link loadThreadSpending}). */
export interface RunContextRead {
  /** Every question the thread's ledger recorded, oldest first (a resume's `expected_interrupts`). */
  asked?: unknown[];
  /** With `asked`: the production build that asked each of them, by interrupt id (null: not known). */
  askedIn?: Record<string, string | null>;
  /** The thread's ticket columns (a new message's input); null when the thread row is gone. */
  thread?: Pick<Thread, "ticket" | "customerMessage" | "orderRef"> | null;
}

/** A json column as the driver hands it: parsed by `pg`, sometimes text elsewhere. */
function parsedJson<T>(value: unknown): T | undefined {
  if (value === null || value === undefined) return undefined;
  return (typeof value === "string" ? JSON.parse(value) : value) as T;
}

/** What {@link runStartRead} reads: the questions asked (`asked`) and the ticket (`thread`) only on request. */
export interface RunStartReadOptions {
  threadId: string;
  runId: string;
  asked?: boolean;
  thread?: boolean;
}

/** The ticket a run's start read, its message and fields opened (sealed under the thread's key, threads.ts). */
async function openedTicket(
  db: Queryable,
  threadId: string,
  thread: Pick<Thread, "ticket" | "customerMessage" | "orderRef"> | null,
): Promise<Pick<Thread, "ticket" | "customerMessage" | "orderRef"> | null> {
  if (!thread) return null;
  return {
    ...thread,
    customerMessage: await openThreadText(db, threadId, thread.customerMessage),
    ticket: (await openThreadJson(db, threadId, thread.ticket)) as Thread["ticket"],
  };
}

/**
 * The thread's spending in its other runs and its budget answers — with, on request, the questions its ledger recorded
 * (`asked`) and its ticket (`thread`) — as one json expression, so it can be read on its own
 * ({@link loadThreadSpending}) or returned by the statement that starts the run (`insertRun`'s `returnStartRead`).
 */
export function runStartRead({ threadId, runId, asked = false, thread = false }: RunStartReadOptions): SQL {
  return sql`json_build_object(
    'tokens_in', (SELECT coalesce(sum(tokens_in), 0) FROM runs WHERE thread_id = ${threadId} AND id <> ${runId}),
    'tokens_out', (SELECT coalesce(sum(tokens_out), 0) FROM runs WHERE thread_id = ${threadId} AND id <> ${runId}),
    'decisions', (SELECT coalesce(json_agg(json_build_object('payload', payload, 'answer', answer,
        'by', resolved_by) ORDER BY resolved_at), '[]'::json)
      FROM decisions
      WHERE thread_id = ${threadId} AND action = 'run_budget' AND status = 'resolved' AND resume_status = 'resolved'),
    'asked', ${
      asked
        ? sql`(SELECT coalesce(json_agg(payload ORDER BY created_at), '[]'::json) FROM decisions
            WHERE thread_id = ${threadId})`
        : sql`NULL::json`
    },
    'asked_in', ${
      asked
        ? sql`(SELECT coalesce(json_object_agg(interrupt_id, asked_in_build), '{}'::json) FROM decisions
            WHERE thread_id = ${threadId})`
        : sql`NULL::json`
    },
    'thread', ${
      thread
        ? sql`(SELECT json_build_object('ticket', ticket, 'customerMessage', customer_message, 'orderRef', order_ref)
            FROM threads WHERE id = ${threadId})`
        : sql`NULL::json`
    })`;
}

/**
 * What a run's start read (see {@link runStartRead}), from its json as the driver hands it: the decisions' questions and
 * answers opened (they are sealed under the thread's key, lib/db/queries/decisions.ts).
 */
export async function parseRunStartRead(
  db: Queryable,
  value: unknown,
  { threadId, asked = false, thread = false }: Pick<RunStartReadOptions, "threadId" | "asked" | "thread">,
): Promise<StartRead> {
  const row = parsedJson<{
    tokens_in: string | number;
    tokens_out: string | number;
    decisions: { payload: unknown; answer: unknown; by: string }[] | null;
    asked: unknown[] | null;
    asked_in: Record<string, string | null> | null;
    thread: Pick<Thread, "ticket" | "customerMessage" | "orderRef"> | null;
  }>(value);
  const decisions: BudgetDecision[] = [];
  for (const d of row?.decisions ?? []) {
    const payload = (await openThreadJson(db, threadId, d.payload)) as { limit?: BudgetLimit } | null;
    const answer = (await openThreadJson(db, threadId, d.answer)) as RunBudgetAnswer;
    if (payload?.limit) decisions.push({ limit: payload.limit, answer, by: d.by });
  }
  return {
    tokensIn: Number(row?.tokens_in ?? 0),
    tokensOut: Number(row?.tokens_out ?? 0),
    decisions,
    ...(asked
      ? {
          asked: await Promise.all((row?.asked ?? []).map((p) => openThreadJson(db, threadId, p))),
          askedIn: row?.asked_in ?? {},
        }
      : {}),
    ...(thread ? { thread: await openedTicket(db, threadId, row?.thread ?? null) } : {}),
  };
}

/**
 * The thread's spending in its other runs and its budget answers, in one statement — with, on request, the
 * questions its ledger recorded (`asked`) and its ticket (`thread`), so a run's start reads its thread once.
 */
export async function loadThreadSpending({
  db,
  ...options
}: RunStartReadOptions & { db: Queryable }): Promise<StartRead> {
  const [row] = rowsOf<{ read: unknown }>(await db.execute(sql`SELECT ${runStartRead(options)} AS read`));
  return parseRunStartRead(db, row?.read, options);
}

/** The limits in force for a thread: the deployment's, each replaced by the ledger's latest raise of it. */
export function limitsInForce(base: Limits, decisions: readonly BudgetDecision[]): Limits {
  const limits = { ...base };
  for (const d of decisions) {
    if (d.answer.decision === "raise" && d.limit in limits) limits[d.limit] = d.answer.to;
  }
  return limits;
}

/**
 * Counts a run's tokens and holds it to its limits. A tracer on purpose: LangChain tells a tracer of a model call
 * synchronously, inside the node that makes it (other handlers are told later, outside the node), so the gate can
 * raise the node's interrupt there, before the call is sent.
 */
export class BudgetGate extends BaseTracer {
  name = GATE_NAME;
  tokensIn = 0;
  tokensOut = 0;
  private readonly limits: Limits;
  private readonly answers: Map<string, BudgetDecision>;

  private readonly price: Price | null;
  private readonly retry: boolean;

  constructor(
    private readonly thread: ThreadSpending,
    options: {
      /** The deployment's limits (default: from the environment). */
      limits?: Limits;
      /** The model's price; null: not known, and no cost limit holds (default: MODEL_PRICE_PER_MTOK). */
      price?: Price | null;
      /** The run is an operator's "Try again": a stop answered earlier does not stop it (it asks again instead). */
      retry?: boolean;
    } = {},
  ) {
    // Model calls are all it holds: LangChain tells it of nothing else (a tracer would otherwise build a run record of
    // every chain, tool and channel write of the graph, to no use here).
    super({
      _awaitHandler: true,
      ignoreChain: true,
      ignoreAgent: true,
      ignoreRetriever: true,
      ignoreCustomEvent: true,
    });
    this.awaitHandlers = true;
    this.price = options.price === undefined ? (env.MODEL_PRICE_PER_MTOK ?? null) : options.price;
    this.retry = options.retry ?? false;
    this.limits = limitsInForce(options.limits ?? deploymentLimits(), thread.decisions);
    this.answers = new Map(thread.decisions.map((d) => [canonicalPayload(d.answer), d]));
  }

  protected persistRun(): Promise<void> {
    return Promise.resolve();
  }

  override _createRunForChatModelStart(...args: Parameters<BaseTracer["_createRunForChatModelStart"]>) {
    this.gate();
    return super._createRunForChatModelStart(...args);
  }

  override _createRunForLLMStart(...args: Parameters<BaseTracer["_createRunForLLMStart"]>) {
    this.gate();
    return super._createRunForLLMStart(...args);
  }

  override async handleLLMEnd(output: LLMResult, runId: string, ...rest: unknown[]): Promise<TracedCall> {
    const usage = tokenUsage(output);
    this.tokensIn += usage.prompt;
    this.tokensOut += usage.completion;
    return (super.handleLLMEnd as (o: LLMResult, id: string, ...r: unknown[]) => Promise<TracedCall>)(
      output,
      runId,
      ...rest,
    );
  }

  /** What this execution spent, for its run's row (written when the run is closed). */
  tokens(): { in: number; out: number } {
    return { in: this.tokensIn, out: this.tokensOut };
  }

  /** What the run and the thread have spent, with this run's calls so far. */
  spent(): RunBudgetPayload["spent"] {
    const runTokens = this.tokensIn + this.tokensOut;
    const threadIn = this.thread.tokensIn + this.tokensIn;
    const threadOut = this.thread.tokensOut + this.tokensOut;
    const runCost = costMicros(this.tokensIn, this.tokensOut, this.price);
    const threadCost = costMicros(threadIn, threadOut, this.price);
    return {
      runTokens,
      threadTokens: threadIn + threadOut,
      ...(runCost === undefined ? {} : { runCostMicros: runCost }),
      ...(threadCost === undefined ? {} : { threadCostMicros: threadCost }),
    };
  }

  /** The first limit this run has reached, with what was spent against it, or null. */
  reached(): { limit: BudgetLimit; budget: number; used: number } | null {
    const spent = this.spent();
    const used: Record<BudgetLimit, number | undefined> = {
      run_tokens: spent.runTokens,
      thread_tokens: spent.threadTokens,
      run_cost_micros: spent.runCostMicros,
      thread_cost_micros: spent.threadCostMicros,
    };
    for (const [limit, budget] of Object.entries(this.limits) as [BudgetLimit, number][]) {
      const value = used[limit];
      if (budget > 0 && value !== undefined && value >= budget) return { limit, budget, used: value };
    }
    return null;
  }

  /**
   * Before a model call, inside its node: hand back a budget answer waiting here, or ask when a limit is reached. The
   * node's config is LangChain's context for the call (a model called with `invoke`), or the node's own, handed over by
   * {@link checkSpending} (a node that streams a model itself: LangChain starts a stream outside the node's context).
   */
  gate(given?: RunnableConfig): void {
    const config = given ?? AsyncLocalStorageProviderSingleton.getRunnableConfig();
    const configurable = config?.configurable as Record<string, unknown> | undefined;
    const node = config?.metadata?.langgraph_node;
    const pad = configurable?.[SCRATCHPAD] as Scratchpad | undefined;
    // Outside a graph's node (a model called by itself), or a graph without a checkpointer: nothing to pause.
    if (!pad || !configurable?.[CHECKPOINTER]) return;
    // Hand back every budget answer waiting here, in order: answers of this node's earlier runs come back first.
    for (;;) {
      const index = pad.interruptCounter + 1;
      const waiting = pad.resume[index];
      if (waiting === undefined) break;
      const decision = this.answers.get(canonicalPayload(waiting));
      // Another question of this node is answered here: it is that question's answer, not ours.
      if (!decision) return;
      interrupt(null);
      // A stop ends the run — unless the node was asked again after it (an operator's "Try again" went on), or this
      // run is that "Try again": then the limits below decide, and a run still past one is asked again.
      const lastAnswer = pad.resume.length <= index + 1;
      if (decision.answer.decision === "stop" && lastAnswer && !this.retry) {
        // Thrown as the node's error (not an abort): LangGraph then keeps what the node was answered, so a later
        // "Try again" finds the stop behind it and asks a new question. The executor ends the run as stopped.
        throw new AppError(RUN_CANCELLED, stoppedMessage(`${decision.by}, at the spending limit`), {
          by: decision.by,
          spendingLimit: true,
        });
      }
    }
    const reached = this.reached();
    // `nullResume` resumes whatever is asked next: never spend it on a question the graph did not ask.
    if (!reached || pad.nullResume !== undefined) return;
    const payload: RunBudgetPayload = {
      action: "run_budget",
      title: `The run reached its limit of ${formatBudget(reached.limit, reached.budget)} (${BUDGET_LIMIT_LABELS[reached.limit]})`,
      limit: reached.limit,
      budget: reached.budget,
      used: reached.used,
      spent: this.spent(),
      ...(typeof node === "string" ? { node } : {}),
    };
    interrupt(payload);
  }
}

/**
 * For a node that streams a model itself (`model.stream(messages, config)`): call it first, with the node's config, so
 * the run's spending limits hold there too (a model called with `invoke` is checked without it). Outside a run of the
 * console (no gate among the callbacks) it does nothing.
 */
export function checkSpending(config: RunnableConfig): void {
  const callbacks = config.callbacks as
    | { handlers?: unknown[]; inheritableHandlers?: unknown[] }
    | unknown[]
    | undefined;
  const handlers = Array.isArray(callbacks)
    ? callbacks
    : [...(callbacks?.handlers ?? []), ...(callbacks?.inheritableHandlers ?? [])];
  const gate = handlers.find((h): h is BudgetGate => (h as { name?: unknown } | null)?.name === GATE_NAME);
  gate?.gate(config);
}
