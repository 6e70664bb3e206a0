import "server-only";
import { z } from "zod";
import { sharedContract } from "@/lib/graphs/contract";
import { toolReviewActsOnIt, toolReviewPolicy } from "@/lib/graphs/tool-review-policy";
import type { InterruptPayload } from "@/lib/interrupts";
import type { AgentDefinition } from "@/lib/runtime/agent";
import { buildInboxReplyGraph, inboxReplyInput } from "./graph";

/** The guide's first fixture: a raw-interrupt graph in agent-inbox's format, added as one folder and one registry line. */
export const inboxReplyAgent: AgentDefinition<InterruptPayload> = {
  id: "inbox_reply",
  title: "Reply drafting (agent-inbox)",
  description: "Drafts a reply and asks a person through an agent-inbox HumanInterrupt.",
  version: "1",
  structureHash: "sha256:6861c857468c0a84",
  interruptNodes: ["review"],
  asks: ["tool_review"],
  build: ({ checkpointer }) => buildInboxReplyGraph({ checkpointer }),
  input: ({ messageId, text }) => inboxReplyInput({ messageId, text }),
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
