import { z } from "zod";
import { requireRole } from "@/lib/auth/principal";
import { getDatabase } from "@/lib/db/client";
import { AUDIT_ACTIONS, listAudit } from "@/lib/db/queries/audit";
import { errorResponse } from "@/lib/errors";
import { parseWith } from "@/lib/http";

export const dynamic = "force-dynamic";

const auditQuery = z.object({
  action: z.enum(AUDIT_ACTIONS).optional(),
  actor: z.string().trim().min(1).max(200).optional(),
  threadId: z.string().trim().min(1).max(200).optional(),
  from: z.coerce.date().optional(),
  to: z.coerce.date().optional(),
  before: z.coerce.number().int().min(1).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

/** The audit trail, newest first: `?action=&actor=&threadId=&from=&to=&before=&limit=`. Read-only. */
export async function GET(request: Request) {
  try {
    await requireRole(request, "viewer");
    const params = Object.fromEntries(new URL(request.url).searchParams);
    const filter = parseWith(auditQuery, params, "bad_request:audit", "The audit query");
    const { db } = await getDatabase();
    const page = await listAudit({ db, filter });
    return Response.json(page, { headers: { "cache-control": "no-store" } });
  } catch (error) {
    return errorResponse(error, "GET /api/audit");
  }
}
