import "server-only";
import { z } from "zod";
import { sharedContract } from "@/lib/agents/kit/contract";
import { messageTicket } from "@/lib/agents/kit/ticket-fields";
import { toolReviewActsOnIt, toolReviewPolicy } from "@/lib/agents/kit/tool-review-policy";
import type { InterruptPayload } from "@/lib/contract/questions";
import type { AgentDefinition } from "@/lib/runtime/agents/registry";
import { buildNestedReviewGraph, nestedReviewInput } from "./graph";

/** The guide's second fixture: a question raised inside a subgraph, added as one folder and one registry line. */
export const nestedReviewAgent: AgentDefinition<InterruptPayload> = {
  id: "nested_review",
  title: "Ticket closing (subgraph)",
  description: "Asks inside a subgraph whether to close the ticket.",
  version: "1",
  structureHash: "sha256:8c0daa620ce12887",
  interruptNodes: ["approval"],
  asks: ["tool_review"],
  build: ({ checkpointer }) => buildNestedReviewGraph({ checkpointer }),
  intake: messageTicket,
  input: ({ messageId, text }) => nestedReviewInput({ messageId, text }),
  interrupts: sharedContract,
  fork: {
    editable: z.strictObject({ resolution: z.string().min(1).max(500) }).partial(),
    editableFields: ["resolution"],
    asNodes: ["prepare"],
    markEdited: () => ({}),
  },
  effects: async () => [],
  policy: toolReviewPolicy({ close_ticket: { role: "operator" } }),
  actsOnIt: toolReviewActsOnIt,
  context: () => ({ orderId: null, customerName: null }),
};
