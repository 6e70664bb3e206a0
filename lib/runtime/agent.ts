import "server-only";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { BaseCheckpointSaver, StateSnapshot } from "@langchain/langgraph";
import type { z } from "zod";
import type { DescribeInterrupt } from "@/lib/agui";
import type { Principal } from "@/lib/auth/roles";
import type { AppDb } from "@/lib/db/open";
import type { InvolvedPrincipal } from "@/lib/db/queries/involved";
import type { Queryable } from "@/lib/db/tx";
import type { DecisionSummary } from "@/lib/wire";

/*
 * What the runtime needs to know about an agent, and nothing more: an agent brings its graph and its rules through one
 * `AgentDefinition`; `lib/runtime`, `lib/agui`, `lib/db` and `lib/checkpoint` never import an agent. The app registers
 * its agents at start (`lib/agents.ts`), and every thread names the agent it runs.
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

export type { DecisionSummary };

/** A recorded side effect that a branch from some checkpoint would reach again. */
export interface SideEffectWarning {
  code: `side_effect:${string}`;
  message: string;
  /** The ledger row that prevents doing it twice. */
  recordId: string;
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
}

export interface AgentDefinition<P = unknown> {
  /** Stable id, stored on every thread (`refund`, `account_change`). */
  id: string;
  /** For people: the new-ticket form and the thread page. */
  title: string;
  description: string;
  /** Declared version of the graph (bump it when nodes, edges, interrupts or state change). */
  version: string;
  /** The compiled graph on this process's checkpointer and database (the agent picks its own model, if any). */
  build(deps: { checkpointer: BaseCheckpointSaver; db: AppDb }): AgentGraph;
  /** The state update a customer message starts (or continues) a thread with. */
  input(message: { messageId: string; text: string; orderRef: string | null }): unknown;
  /** The interrupt contract: how the agent's interrupt values read, are answered and are summarized. */
  interrupts: {
    parse(raw: unknown): ParsedPayload<P>;
    /** Validate an answer against the payload it answers: the parsed answer, or why not. */
    validate(payload: P, answer: unknown): { ok: true; answer: unknown } | { ok: false; error: string };
    /** AG-UI `Interrupt.responseSchema`: the JSON Schema of the answer. */
    responseSchema(payload: P): Record<string, unknown>;
    summarize(raw: unknown): DecisionSummary;
  };
  /** Time travel: which state a fork may edit, and as which nodes. */
  fork: {
    editable: z.ZodType<Record<string, unknown>>;
    editableFields: readonly string[];
    asNodes: readonly string[];
    /** The state update that marks a branch as edited by a principal (written by the runtime, never by the edit). */
    markEdited(principalId: string): Record<string, unknown>;
  };
  /** Side effects a branch from a checkpoint (with these values) would reach again: warned before a fork. */
  effects(args: {
    db: Queryable;
    threadId: string;
    values: Record<string, unknown>;
  }): Promise<SideEffectWarning[]>;
  /** Who may take which decision: throws an AppError (403) to refuse. Rejections usually pass. */
  policy(attempt: DecisionAttempt<P>): void;
  /** Whether this answer acts on the world (approves, sends): the runtime collects `involved` only for those. */
  actsOnIt(payload: P, answer: unknown): boolean;
  /** What a thread is about, read from its state (for the inbox when a payload does not say). */
  context(values: Record<string, unknown>): { orderId: string | null; customerName: string | null };
  /** Extra `configurable` keys for a run (e.g. chaos delays). */
  configurable?: Record<string, unknown>;
}

const KEY = Symbol.for("hitl-console.agents");
type G = typeof globalThis & { [KEY]?: Map<string, AgentDefinition> };

function registry(): Map<string, AgentDefinition> {
  const g = globalThis as G;
  g[KEY] ??= new Map();
  return g[KEY];
}

/** Register an agent (idempotent for the same definition; a different one under a taken id is a programming error). */
export function registerAgent<P>(definition: AgentDefinition<P>): void {
  const agents = registry();
  const known = agents.get(definition.id);
  if (known && known.version !== definition.version) {
    throw new Error(`agent ${definition.id}: version ${definition.version} registered over ${known.version}`);
  }
  // The runtime only hands an agent payloads its own contract parsed: erasing P here is safe.
  agents.set(definition.id, definition as unknown as AgentDefinition);
}

/** The registered agent with this id, or an error naming the ones there are. */
export function getAgent(id: string): AgentDefinition {
  const agent = registry().get(id);
  if (!agent) {
    throw new Error(
      `agent ${id} is not registered (registered: ${[...registry().keys()].join(", ") || "none"})`,
    );
  }
  return agent;
}

/** Every registered agent, in registration order. */
export function listAgents(): AgentDefinition[] {
  return [...registry().values()];
}

/** Whether an agent id is registered (validating input before it reaches `getAgent`). */
export function hasAgent(id: string): boolean {
  return registry().has(id);
}

/** The agent's contract as the AG-UI mapper reads interrupts: kind, headline and answer schema. */
export function interruptDescriber(agent: AgentDefinition): DescribeInterrupt {
  return (value) => {
    const parsed = agent.interrupts.parse(value);
    return parsed.ok
      ? {
          reason: parsed.action,
          message: parsed.title,
          responseSchema: agent.interrupts.responseSchema(parsed.payload),
        }
      : null;
  };
}
