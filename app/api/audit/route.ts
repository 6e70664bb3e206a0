import { z } from "zod";
import { AUDIT_ACTIONS } from "@/lib/contract/audit";
import { idCursorParam, isoDateParam, limitParam } from "@/lib/contract/params";
import { json, route } from "@/lib/http/route";
import { readAuditTrail } from "@/lib/runtime/views/audit-view";

export const dynamic = "force-dynamic";

const auditQuery = z.strictObject({
  action: z.enum(AUDIT_ACTIONS).optional(),
  actor: z.string().trim().min(1).max(200).optional(),
  threadId: z.string().trim().min(1).max(200).optional(),
  from: isoDateParam.optional(),
  to: isoDateParam.optional(),
  before: idCursorParam.optional(),
  limit: limitParam(200, 50),
});

/** The audit trail, newest first: `?action=&actor=&threadId=&from=&to=&before=&limit=`. Read-only. */
export const GET = route(
  {
    name: "GET /api/audit",
    access: "viewer",
    query: { schema: auditQuery, code: "bad_request:audit", what: "The audit query" },
  },
  async ({ query, database, scope }) =>
    json(
      await readAuditTrail({ db: database.db, filter: query, hiddenAgents: (await scope()).hiddenAgents }),
    ),
);
