import "server-only";
import { z } from "zod";
import type { AgentIntake } from "@/lib/runtime/agents/registry";

/*
 * Ticket fields the shipped agents share (`AgentDefinition.intake`). An agent's intake is its own: these are building
 * blocks, not a form every ticket has. `.meta()` gives the new-ticket form a field's label, help and widget.
 */

/** The customer's words: every intake has it (the thread's text, its title and the first run's message). */
export const ticketMessage = z
  .string({ error: "must be text" })
  .trim()
  .min(1, "message is required")
  .max(5000, "must be at most 5000 characters")
  .meta({ title: "Customer message", widget: "textarea" });

/** An order number the ticket system already tied to the sender (`ORD-1234`, any letter case; stored upper case). */
export const ticketOrderRef = z
  .string({ error: "must be text like ORD-1234" })
  .trim()
  .regex(/^ORD-\d{4}$/i, "orderRef looks like ORD-1234")
  .meta({
    title: "Order",
    widget: "order",
    description:
      "The order the ticket system tied the sender to. Without one, the agent asks for the number.",
  })
  .transform((s) => s.toUpperCase());

/** A ticket about a shop order: the message and, when the ticket system knows it, the order. */
export const orderTicket = {
  schema: z.strictObject({ message: ticketMessage, orderRef: ticketOrderRef.optional() }),
  order: (ticket) => (typeof ticket.orderRef === "string" ? ticket.orderRef : null),
} satisfies AgentIntake;

/** A ticket that is only the customer's message. */
export const messageTicket = {
  schema: z.strictObject({ message: ticketMessage }),
} satisfies AgentIntake;
