import { z } from "zod";
import { json, route } from "@/lib/http/route";
import { eraseCustomer } from "@/lib/runtime/retention/erasure";

export const dynamic = "force-dynamic";

const erasureBody = z.strictObject({
  email: z.string().trim().email().max(254),
  /** A spelling of the customer's name besides the one on their orders (it must share a word with it). */
  name: z.string().trim().min(3).max(200).optional(),
  /** Report what would change, and change nothing. */
  preview: z.boolean().optional(),
});

/**
 * Erase a customer's personal data (admins), by subject: a customer with orders under that email (404 otherwise; 200
 * with `alreadyErased` for one erased before; 422 for a "name" that is not theirs; 409 while one of their threads has
 * a run going). In their own rows only — their threads, orders, account and the audit rows of their threads — their
 * email, names and the values their agents declare personal become placeholders, as whole words, never a JSON key or
 * anyone else's row; never an id, status, amount or who decided. `preview: true` reports the rows it would change and
 * changes nothing. The erasure itself is audited and the audit trail still verifies.
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
