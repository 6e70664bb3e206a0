import { revokeApiKey } from "@/lib/auth/api-keys";
import { requireRole } from "@/lib/auth/principal";
import { getDatabase } from "@/lib/db/client";
import { errorResponse } from "@/lib/errors";
import { assertSameOrigin } from "@/lib/http";

export const dynamic = "force-dynamic";

/** Revoke an intake key (admins only): refused from the next request on. Revoking twice is harmless. */
export async function POST(request: Request, { params }: { params: Promise<{ keyId: string }> }) {
  try {
    assertSameOrigin(request);
    const by = await requireRole(request, "admin");
    const { keyId } = await params;
    const { db } = await getDatabase();
    return Response.json(await revokeApiKey({ db, keyId, by }));
  } catch (error) {
    return errorResponse(error, "POST /api/admin/keys/[keyId]/revoke");
  }
}
