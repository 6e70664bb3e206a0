import "server-only";
import { Annotation } from "@langchain/langgraph";
import { z } from "zod";
import { PG_INT_MAX } from "@/lib/contract/params";
import { ORDER_REF_PATTERN } from "./order-ref";

/** A plain last-value channel with a default, so every key is present in the state from the start. */
export function lastValue<T>(initial: () => T) {
  return Annotation<T>({ reducer: (_current, update) => update, default: initial });
}

/*
 * Editable fields shared by the agents' fork rules (`AgentDefinition.fork.editable`): typed and bounded, so a fork's
 * edit is refused with the field named rather than failing the run later.
 */

/** The customer's message as the agent reads it. */
export const editableMessage = z
  .string({ error: "must be text" })
  .trim()
  .min(1, "must not be empty")
  .max(5000, "must be at most 5000 characters")
  .meta({ title: "Customer's message" });

/** `ORD-1234` (any letter case), or null to make the agent ask for it. */
export const editableOrderRef = z
  .string({ error: "must look like ORD-1234, or be empty" })
  .trim()
  .regex(new RegExp(`^${ORDER_REF_PATTERN}$`), "must look like ORD-1234")
  .transform((s) => s.toUpperCase())
  .nullable()
  .meta({ title: "Order number" });

/** An amount in cents, or null for "the whole order". */
export const editableCents = z
  .number({ error: "must be a number" })
  .int("must be a whole number of cents")
  .positive("must be more than 0")
  .max(PG_INT_MAX, `must be at most ${PG_INT_MAX}`)
  .nullable()
  .meta({ title: "Amount", widget: "money" });
