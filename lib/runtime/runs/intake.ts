import "server-only";
import { z } from "zod";
import { humanize } from "@/lib/contract/humanize";
import type { Thread } from "@/lib/db/schema";
import { parseWith } from "@/lib/platform/http/http";
import type { AgentDefinition } from "../agents/registry";

/*
 * A ticket is what its agent says it is (`AgentDefinition.intake`): `POST /api/threads` reads its fields with the
 * agent's schema, the new-ticket page draws its form from the same schema as JSON Schema, and the first run gets the
 * fields as read. The console itself fixes only `agent`, `title` and the agent's `message`.
 */

/** A ticket's fields, read with its agent's schema (400 `bad_request:thread` naming the field otherwise). */
export function readTicket(
  agent: Pick<AgentDefinition, "intake">,
  fields: unknown,
): { ticket: Record<string, unknown>; message: string; orderRef: string | null } {
  const ticket = parseWith(agent.intake.schema, fields, "bad_request:thread", "The ticket");
  const orderRef = agent.intake.order?.(ticket) ?? null;
  return { ticket, message: ticket.message, orderRef };
}

/** Converted once per intake: every thread view asks for it (its header's lines), and it never changes. */
const jsonSchemas = new WeakMap<AgentDefinition["intake"], Record<string, unknown>>();

/** The JSON Schema of a ticket's fields as a client types them (read-only, shared): the new-ticket form's source. */
export function intakeJsonSchema(agent: Pick<AgentDefinition, "intake">): Record<string, unknown> {
  let schema = jsonSchemas.get(agent.intake);
  if (!schema) {
    schema = z.toJSONSchema(agent.intake.schema, { io: "input", unrepresentable: "any" }) as Record<
      string,
      unknown
    >;
    jsonSchemas.set(agent.intake, schema);
  }
  return schema;
}

/**
 * The fields a thread was filed with. Threads filed before tickets were the agent's own (no `ticket` stored) had a
 * message and an optional order number: read back as exactly that.
 */
export function ticketOf(
  thread: Pick<Thread, "ticket" | "customerMessage" | "orderRef">,
): Record<string, unknown> {
  if (thread.ticket && typeof thread.ticket === "object" && !Array.isArray(thread.ticket))
    return thread.ticket as Record<string, unknown>;
  return { message: thread.customerMessage, ...(thread.orderRef ? { orderRef: thread.orderRef } : {}) };
}

/**
 * The ticket's own fields for people (the thread page's header): each field the agent declares besides the message
 * and an order pick (shown on their own), with the schema's title, when the ticket has it.
 */
export function ticketLines(
  agent: Pick<AgentDefinition, "intake">,
  ticket: Record<string, unknown>,
): { name: string; label: string; value: string }[] {
  const properties = (intakeJsonSchema(agent).properties ?? {}) as Record<
    string,
    { title?: unknown; widget?: unknown; enum?: unknown }
  >;
  return Object.entries(properties).flatMap(([name, property]) => {
    const value = ticket[name];
    if (name === "message" || property.widget === "order" || value === undefined || value === null) return [];
    const label = typeof property.title === "string" ? property.title : name;
    const text = typeof value === "string" ? value : JSON.stringify(value);
    // A choice reads as words ("formal" → "Formal"); what was typed stays as typed.
    return [{ name, label, value: Array.isArray(property.enum) ? humanize(text) : text }];
  });
}
