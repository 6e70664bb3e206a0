import { z } from "zod";
import { json, route } from "@/lib/route";
import { eraseCustomer } from "@/lib/runtime/erasure";

export const dynamic = "force-dynamic";

const erasureBody = z.strictObject({
  email: z.string().trim().email().max(254),
  /** A spelling of the customer's name besides the one on their orders (it must share a word with it). */
  name: z.string().trim().min(3).max(200).optional(),
  /** Report what would change, and change nothing. */
  preview: z.boolean().optional(),
});

/**
 * Erase a customer's personal data (admins), by subject: a customer with orders under that email (404 otherwise; 422
 * for a staff account or a "name" that is not theirs). Their email and name become placeholders in every thread,
 * checkpoint, event, effect and audit entry, and the values their agents declare personal (their words, an IBAN, an
 * address) in their own threads; never an id, status, answer, amount or who decided. `preview: true` reports the
 * rows it would change and changes nothing. The erasure itself is audited and the audit trail still verifies.
 */
export const POST = route(
  {
    name: "POST /api/admin/erasure",
    access: "admin",
    body: { schema: erasureBody, code: "bad_request:erasure", what: "The erasure request" },
  },
  async ({ body, principal, database: { db } }) =>
    json(
      await eraseCustomer({
        db,
        email: body.email,
        names: body.name ? [body.name] : [],
        actor: principal,
        preview: body.preview ?? false,
      }),
    ),
);
