import "server-only";
import { z } from "zod";
import { sharedContract } from "@/lib/agents/kit/contract";
import { emailWarnings } from "@/lib/agents/kit/email-effects";
import { refuseOwnInput } from "@/lib/agents/kit/four-eyes";
import { orderTicket } from "@/lib/agents/kit/ticket-fields";
import type { InterruptPayload } from "@/lib/contract/questions";
import { formatMoney } from "@/lib/contract/wire";
import type { AgentDefinition, EffectsArgs, SideEffectWarning } from "@/lib/runtime/agents/registry";
import { listVouchersForThread } from "@/lib/shop/vouchers";
import { buildGoodwillGraph, goodwillInput } from "./graph";

/**
 * A fork from before the reply would run it again as a new step: a new voucher, and a new email with its code. Said
 * before the fork, for every voucher and email the thread already has; from after the reply, nothing is reached again.
 */
async function voucherWarnings({ db, threadId, values }: EffectsArgs): Promise<SideEffectWarning[]> {
  const messages = (values.messages as { id?: string }[] | undefined) ?? [];
  if (messages.some((m) => String(m.id ?? "").startsWith("goodwill-reply-"))) return [];
  const vouchers = (await listVouchersForThread({ db, threadId })).map((v) => ({
    code: "side_effect:voucher" as const,
    recordId: v.id,
    message:
      `A voucher worth ${formatMoney(v.amountCents, v.currency)} (${v.code}) is already issued on this thread, and a ` +
      "branch cannot take it back. A branch from here that grants again issues a new one.",
  }));
  return [...vouchers, ...(await emailWarnings({ db, threadId }))];
}

/** A fork may reword the complaint; it can never set the voucher or the decision. */
const editable = z
  .strictObject({
    complaint: z
      .string({ error: "must be text" })
      .trim()
      .min(1, "must not be empty")
      .max(5000, "must be at most 5000 characters"),
  })
  .partial();

/**
 * The README's example agent: a customer complains, the agent proposes a goodwill voucher, a person grants or
 * declines it. The runtime needs nothing else to run, stream, fork, audit and recover it.
 */
export const goodwillAgent: AgentDefinition<InterruptPayload> = {
  id: "goodwill",
  title: "Goodwill voucher",
  description: "An unhappy customer: the agent proposes a voucher and a person grants or declines it.",
  version: "1",
  structureHash: "sha256:e52a9a5d85758199",
  interruptNodes: ["ask"],
  asks: ["goodwill_voucher"],
  build: (deps) => buildGoodwillGraph(deps),
  intake: orderTicket,
  input: ({ messageId, text, ticket }) =>
    goodwillInput({ messageId, text, orderRef: orderTicket.order(ticket) }),
  interrupts: sharedContract,
  fork: { editable, editableFields: ["complaint"], asNodes: [], markEdited: () => ({}) },
  effects: (args) => voucherWarnings(args),
  // Whoever filed the complaint or started its run may not grant the voucher.
  policy({ payload, answer, principal, involved }) {
    const grants = (answer as { decision?: unknown } | null)?.decision === "grant";
    if (payload.action === "goodwill_voucher" && grants)
      refuseOwnInput({ principal, involved, what: "grant it" });
  },
  /** The customer's own words (and what they asked to change to): erased with the customer. */
  personalData: ["complaint"],
  actsOnIt: (payload, answer) =>
    payload.action === "goodwill_voucher" && (answer as { decision?: unknown } | null)?.decision === "grant",
  context: (values) => ({
    orderId: typeof values.orderRef === "string" ? values.orderRef : null,
    customerName: (values.customer as { name?: string } | undefined)?.name ?? null,
  }),
};
