import "server-only";
import { HumanMessage } from "@langchain/core/messages";
import { z } from "zod";
import type { InterruptPayload } from "@/lib/contract/questions";
import type { MultitaskStrategy } from "@/lib/contract/wire";
import type {
  AgentDefinition,
  AgentIntake,
  EffectsArgs,
  SideEffectWarning,
} from "@/lib/runtime/agents/registry";
import { sharedContract } from "./contract";
import { messageTicket } from "./ticket-fields";
import {
  type ToolRule,
  toolReviewActsOnIt,
  toolReviewAuthorizes,
  toolReviewPolicy,
} from "./tool-review-policy";

/*
 * The agent kit, one public entry (`@hitl/agent-kit`): what a team's agent package imports to be served by the console
 * — the definition types and helpers, the decision policies, the question kinds it may ask, ticket fields, and the
 * scripted offline model for its tests and demos. Anything else under lib/ is the console's own and may change.
 */

export type { InterruptPayload } from "@/lib/contract/questions";
export type {
  AgentDefinition,
  AgentGraph,
  AgentIntake,
  AgentMigration,
  DecisionAttempt,
  EffectsArgs,
  SideEffectWarning,
} from "@/lib/runtime/agents/registry";
export { askHuman, askHumanDecision, decisionRef } from "./ask-human";
export { sharedContract } from "./contract";
export { refuseOwnInput } from "./four-eyes";
export { reviewToolCalls } from "./reviewed-tools";
export {
  type Script,
  type ScriptContext,
  type ScriptedCall,
  ScriptedChatModel,
  type ScriptedTurn,
  scriptedAnswer,
} from "./scripted-model";
export { messageTicket, orderTicket, ticketMessage, ticketOrderRef } from "./ticket-fields";
export {
  declaredToolRules,
  type ToolRule,
  toolReviewActsOnIt,
  toolReviewAuthorizes,
  toolReviewPolicy,
} from "./tool-review-policy";

/** The question kinds an agent outside this repository may ask (their forms, summaries and policies are the console's). */
export const KIT_QUESTION_KINDS = ["tool_review", "input_text", "select_option"] as const;

/** What {@link defineToolReviewAgent} needs: the rest of the definition follows from it. */
export interface ToolReviewAgentSpec {
  id: string;
  title: string;
  description: string;
  version: string;
  structureHash: string;
  /** The nodes that ask (`"HumanInTheLoopMiddleware.after_model"` for a `createAgent`). */
  interruptNodes: readonly string[];
  build: AgentDefinition["build"];
  /** Per reviewed tool: who may let it run, what an edit may change, what it authorizes. */
  tools: Record<string, ToolRule<never>>;
  /** The ticket (default: the customer's message only). */
  intake?: AgentIntake;
  /** The first state from a ticket (default: the message as the conversation's first human message). */
  input?: AgentDefinition["input"];
  /** Tickets that bring the agent to each of its questions: the demo, and the generated suites (e2e/agents/). */
  examples?: readonly Record<string, unknown>[];
  /** What a branch from a checkpoint would do again (default: nothing). */
  effects?: (args: EffectsArgs) => Promise<SideEffectWarning[]>;
  /** What the thread is about, from its state (default: nothing the inbox shows). */
  context?: AgentDefinition["context"];
  personalData?: readonly string[];
  multitask?: MultitaskStrategy;
  migrations?: AgentDefinition["migrations"];
}

/**
 * An agent whose questions are the ecosystem's standard reviews (LangChain's `humanInTheLoopMiddleware` through
 * {@link reviewToolCalls}, or agent-inbox `HumanInterrupt`s): the contract, the policy from the per-tool rules, what
 * answers act and authorize, and a conversation no fork may rewrite.
 */
export function defineToolReviewAgent(spec: ToolReviewAgentSpec): AgentDefinition<InterruptPayload> {
  return {
    id: spec.id,
    title: spec.title,
    description: spec.description,
    version: spec.version,
    structureHash: spec.structureHash,
    interruptNodes: spec.interruptNodes,
    asks: ["tool_review"],
    build: spec.build,
    intake: spec.intake ?? messageTicket,
    input:
      spec.input ??
      (({ messageId, text }) => ({ messages: [new HumanMessage({ id: messageId, content: text })] })),
    interrupts: sharedContract,
    fork: { editable: z.strictObject({}).partial(), editableFields: [], asNodes: [], markEdited: () => ({}) },
    effects: spec.effects ?? (async () => []),
    policy: toolReviewPolicy(spec.tools),
    authorizes: toolReviewAuthorizes(spec.tools),
    actsOnIt: toolReviewActsOnIt,
    context: spec.context ?? (() => ({ orderId: null, customerName: null })),
    ...(spec.examples ? { examples: spec.examples } : {}),
    ...(spec.personalData ? { personalData: spec.personalData } : {}),
    ...(spec.multitask ? { multitask: spec.multitask } : {}),
    ...(spec.migrations ? { migrations: spec.migrations } : {}),
  };
}
