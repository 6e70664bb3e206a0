import { z } from "zod";
import { issueApiKey, listApiKeys } from "@/lib/auth/api-keys";
import { requireRole } from "@/lib/auth/principal";
import { getDatabase } from "@/lib/db/client";
import { errorResponse } from "@/lib/errors";
import { assertSameOrigin, parseWith, readJson } from "@/lib/http";

export const dynamic = "force-dynamic";

const newKey = z.object({ name: z.string().trim().min(1).max(100) });

/** Intake API keys (admins only): their names, prefixes and state; never the keys. */
export async function GET(request: Request) {
  try {
    await requireRole(request, "admin");
    const { db } = await getDatabase();
    return Response.json({ items: await listApiKeys({ db }) }, { headers: { "cache-control": "no-store" } });
  } catch (error) {
    return errorResponse(error, "GET /api/admin/keys");
  }
}

/** Issue an intake key (admins only). The response is the only place the key is ever shown. */
export async function POST(request: Request) {
  try {
    assertSameOrigin(request);
    const by = await requireRole(request, "admin");
    const body = parseWith(newKey, await readJson(request), "bad_request:api_key", "The new key");
    const { db } = await getDatabase();
    const issued = await issueApiKey({ db, name: body.name, by });
    return Response.json(issued, { status: 201, headers: { "cache-control": "no-store" } });
  } catch (error) {
    return errorResponse(error, "POST /api/admin/keys");
  }
}
