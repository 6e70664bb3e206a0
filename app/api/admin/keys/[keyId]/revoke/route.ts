import { revokeApiKey } from "@/lib/auth/api-keys";
import { json, route } from "@/lib/http/route";

export const dynamic = "force-dynamic";

/** Revoke an intake key (admins only): refused from the next request on. Revoking twice is harmless. */
export const POST = route<{ keyId: string }>(
  { name: "POST /api/admin/keys/[keyId]/revoke", access: "admin" },
  async ({ params, principal, database }) =>
    json(await revokeApiKey({ db: database.db, keyId: params.keyId, by: principal })),
);
