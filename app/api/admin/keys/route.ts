import { z } from "zod";
import { issueApiKey, listApiKeys } from "@/lib/auth/api-keys";
import { json, route } from "@/lib/http/route";

export const dynamic = "force-dynamic";

const newKey = z.strictObject({ name: z.string().trim().min(1).max(100) });

/** Intake API keys (admins only): their names, prefixes and state; never the keys. */
export const GET = route({ name: "GET /api/admin/keys", access: "admin" }, async ({ database }) =>
  json({ items: await listApiKeys({ db: database.db }) }),
);

/** Issue an intake key (admins only). The response is the only place the key is ever shown. */
export const POST = route(
  {
    name: "POST /api/admin/keys",
    access: "admin",
    body: { schema: newKey, code: "bad_request:api_key", what: "The new key" },
  },
  async ({ body, principal, database }) =>
    json(await issueApiKey({ db: database.db, name: body.name, by: principal }), { status: 201 }),
);
