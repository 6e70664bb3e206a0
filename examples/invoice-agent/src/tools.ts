import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { findInvoice } from "./invoices";

/** The credit note's arguments: the review form is generated from this schema, and an edit is checked against it. */
export const creditNoteArgs = z.strictObject({
  invoiceId: z
    .string()
    .regex(/^INV-\d{4}$/)
    .describe("The invoice the credit note is against"),
  amountCents: z.number().int().min(100).max(100_000).describe("Cents, 1.00 to 1,000.00"),
  note: z.string().trim().min(1).max(300).describe("What the customer reads on the credit note"),
});
export type CreditNoteArgs = z.infer<typeof creditNoteArgs>;

/** What the tools tell the model (and so the customer): only what they found or did. */
export const lookupInvoice = tool(
  async ({ invoiceId }) => {
    const invoice = findInvoice(invoiceId);
    return JSON.stringify(invoice ? { found: true, ...invoice } : { found: false, invoiceId });
  },
  {
    name: "lookup_invoice",
    description: "Look an invoice up by its number: customer, total, the disputed line.",
    schema: z.object({ invoiceId: z.string().min(1).max(32) }),
  },
);

/**
 * The acting tool, reviewed by a person before it runs. This example has no billing system to hand the note to: it
 * says what is true — a person approved this credit note, and it is not issued yet — and the reply claims no more.
 */
export const issueCreditNote = tool(
  async (args) =>
    JSON.stringify({
      approved: true,
      issued: false,
      invoiceId: args.invoiceId,
      amountCents: args.amountCents,
      note: args.note,
    }),
  {
    name: "issue_credit_note",
    description:
      "Propose a credit note against an invoice (a person reviews it first; issuing it is billing's).",
    schema: creditNoteArgs,
  },
);

export const INVOICE_TOOLS = [lookupInvoice, issueCreditNote];
