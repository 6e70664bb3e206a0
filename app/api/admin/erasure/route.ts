import { z } from "zod";
import { json, route } from "@/lib/route";
import { eraseCustomer } from "@/lib/runtime/erasure";

export const dynamic = "force-dynamic";

const erasureBody = z.strictObject({
  email: z.string().trim().email().max(254),
  /** A spelling of the customer's name besides the one on their orders. */
  name: z.string().trim().min(3).max(200).optional(),
});

/**
 * Erase a customer's personal data (admins): their email and name become placeholders in every thread, checkpoint,
 * event, effect and audit entry; the erasure itself is audited and the audit trail still verifies.
 */
export const POST = route(
  {
    name: "POST /api/admin/erasure",
    access: "admin",
    body: { schema: erasureBody, code: "bad_request:erasure", what: "The erasure request" },
  },
  async ({ body, principal, database: { db } }) =>
    json(
      await eraseCustomer({ db, email: body.email, names: body.name ? [body.name] : [], actor: principal }),
    ),
);
