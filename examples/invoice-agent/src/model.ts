import { type ScriptContext, ScriptedChatModel, type ScriptedTurn } from "@hitl/agent-kit";
import type { BaseMessage } from "@langchain/core/messages";
import { invoiceRefIn } from "./invoices";

/*
 * The agent's offline model, written with the kit's scripted model: a function of the conversation, so every thread
 * gets its own deterministic answers (demo and tests alike). Swap in a real chat model in `buildInvoiceGraph`.
 */

const euros = (cents: number) => `€${(cents / 100).toFixed(2)}`;

function lastToolResult(messages: BaseMessage[], name: string): { content: string; status?: string } | null {
  const last = messages.at(-1) as (BaseMessage & { name?: string; status?: string }) | undefined;
  if (last?.getType() !== "tool" || last.name !== name) return null;
  return { content: String(last.content), status: last.status };
}

function json(text: string): Record<string, unknown> | null {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return null;
  }
}

/** One turn of the invoice-dispute conversation. */
export function invoiceScript({ messages }: ScriptContext): ScriptedTurn {
  const asked = messages.find((m) => m.getType() === "human");
  const credit = lastToolResult(messages, "issue_credit_note");
  if (credit) {
    const done = json(credit.content);
    if (done?.approved === true) {
      return `Thank you for your patience. A colleague approved a credit note of ${euros(Number(done.amountCents))} against ${String(done.invoiceId)}. It is not issued yet: we will write to you when it is.`;
    }
    return `A colleague reviewed your dispute and we will not issue a credit note for now: ${credit.content}`;
  }
  const lookup = lastToolResult(messages, "lookup_invoice");
  if (lookup) {
    const invoice = json(lookup.content);
    if (invoice?.found !== true) return `I could not find invoice ${String(invoice?.invoiceId ?? "")}.`;
    return {
      say: "I found the invoice; a colleague reviews the credit note before it goes out.",
      calls: [
        {
          name: "issue_credit_note",
          args: {
            invoiceId: invoice.id,
            amountCents: invoice.disputedCents,
            note: `Credit for: ${String(invoice.disputedLine)}`,
          },
        },
      ],
    };
  }
  const invoiceId = invoiceRefIn(String(asked?.content ?? ""));
  if (!invoiceId) return "Which invoice is this about? Please give its number, like INV-2001.";
  return { calls: [{ name: "lookup_invoice", args: { invoiceId } }] };
}

export function invoiceModel() {
  return new ScriptedChatModel(invoiceScript);
}
