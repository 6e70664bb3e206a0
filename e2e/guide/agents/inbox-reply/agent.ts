import "server-only";
import { z } from "zod";
import { sharedContract } from "@/lib/agents/kit/contract";
import { ticketMessage } from "@/lib/agents/kit/ticket-fields";
import { toolReviewActsOnIt, toolReviewPolicy } from "@/lib/agents/kit/tool-review-policy";
import type { InterruptPayload } from "@/lib/contract/questions";
import type { AgentDefinition, AgentIntake } from "@/lib/runtime/agents/registry";
import { buildInboxReplyGraph, inboxReplyInput } from "./graph";

/**
 * The ticket this agent takes: the customer's message, and the tone of the reply — a field of its own, which the
 * new-ticket form shows and `POST /api/threads` checks for this agent only.
 */
const intake = {
  schema: z.strictObject({
    message: ticketMessage,
    tone: z
      .enum(["friendly", "formal"], { error: "must be friendly or formal" })
      .default("friendly")
      .meta({ title: "Tone of the reply", description: "How the drafted reply addresses the customer." }),
  }),
} satisfies AgentIntake;

/** The guide's first fixture: a raw-interrupt graph in agent-inbox's format, added as one folder and one registry line. */
export const inboxReplyAgent: AgentDefinition<InterruptPayload> = {
  id: "inbox_reply",
  title: "Reply drafting (agent-inbox)",
  description: "Drafts a reply and asks a person through an agent-inbox HumanInterrupt.",
  version: "1",
  structureHash: "sha256:cedc0dbf4ae0ab80",
  interruptNodes: ["review"],
  asks: ["tool_review"],
  build: ({ checkpointer }) => buildInboxReplyGraph({ checkpointer }),
  intake,
  input: ({ messageId, text, ticket }) =>
    inboxReplyInput({ messageId, text, tone: ticket.tone === "formal" ? "formal" : "friendly" }),
  interrupts: sharedContract,
  fork: {
    editable: z.strictObject({ draft: z.string().min(1).max(2000) }).partial(),
    editableFields: ["draft"],
    asNodes: ["write_draft"],
    markEdited: () => ({}),
  },
  effects: async () => [],
  policy: toolReviewPolicy({ send_reply: { role: "operator", fourEyes: true } }),
  actsOnIt: toolReviewActsOnIt,
  context: () => ({ orderId: null, customerName: null }),
};
