import "server-only";
import { z } from "zod";
import { sharedContract } from "@/lib/graphs/contract";
import { refuseOwnInput } from "@/lib/graphs/four-eyes";
import type { InterruptPayload } from "@/lib/interrupts";
import type { AgentDefinition } from "@/lib/runtime/agent";
import { buildGoodwillGraph, goodwillInput } from "./graph";

/** A fork may reword the complaint; it can never set the voucher or the decision. */
const editable = z.strictObject({ complaint: z.string().trim().min(1).max(5000) }).partial();

/**
 * The README's example agent: a customer complains, the agent proposes a goodwill voucher, a person grants or
 * declines it. The runtime needs nothing else to run, stream, fork, audit and recover it.
 */
export const goodwillAgent: AgentDefinition<InterruptPayload> = {
  id: "goodwill",
  title: "Goodwill voucher",
  description: "An unhappy customer: the agent proposes a voucher and a person grants or declines it.",
  version: "1",
  structureHash: "sha256:f9566b1adb78806f",
  interruptNodes: ["ask"],
  asks: ["goodwill_voucher"],
  build: (deps) => buildGoodwillGraph(deps),
  input: (message) => goodwillInput(message),
  interrupts: sharedContract,
  fork: { editable, editableFields: ["complaint"], asNodes: [], markEdited: () => ({}) },
  effects: async () => [],
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
