import { defineToolReviewAgent, reviewToolCalls, type ToolRule } from "@hitl/agent-kit";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { invoiceModel } from "./model";
import { type CreditNoteArgs, INVOICE_TOOLS } from "./tools";

/** Credit notes above this many cents (as proposed or as edited) need a supervisor. */
export const CREDIT_NOTE_SUPERVISOR_CENTS = 20_000;

/** Who may approve the credit note: never who filed the dispute, a supervisor above the line. */
export const INVOICE_RULES = {
  issue_credit_note: {
    fourEyes: true,
    role: (args: CreditNoteArgs) =>
      args.amountCents > CREDIT_NOTE_SUPERVISOR_CENTS ? "supervisor" : "operator",
    // The amount and the customer's note; never the invoice it is against.
    editable: ["amountCents", "note"],
  } satisfies ToolRule<CreditNoteArgs>,
};

/** The graph: a LangChain createAgent, its credit note reviewed as LangChain's docs write it (`{ tool: true }`). */
export function buildInvoiceGraph({
  checkpointer,
  model = invoiceModel(),
}: {
  checkpointer: BaseCheckpointSaver;
  model?: BaseChatModel;
}) {
  return createAgent({
    name: "invoice_dispute",
    model,
    tools: INVOICE_TOOLS,
    systemPrompt:
      "You handle invoice disputes. Look the invoice up, then propose a credit note for a person to review.",
    middleware: [reviewToolCalls({ issue_credit_note: true }, { tools: INVOICE_TOOLS })],
    checkpointer,
  }).graph;
}

export const invoiceDisputeAgent = defineToolReviewAgent({
  id: "invoice_dispute",
  title: "Invoice disputes (example package)",
  description:
    "A customer disputes an invoice: the agent looks it up and proposes a credit note for a person to review.",
  version: "1",
  structureHash: "sha256:078e451bb98b7346",
  interruptNodes: ["HumanInTheLoopMiddleware.after_model"],
  build: ({ checkpointer }) => buildInvoiceGraph({ checkpointer }),
  tools: INVOICE_RULES,
  examples: [
    { message: "Invoice INV-2001 charges the same consulting day twice." },
    { message: "The late fee on INV-2002 is wrong, I paid on time." },
  ],
  personalData: ["messages.0.content"],
});
