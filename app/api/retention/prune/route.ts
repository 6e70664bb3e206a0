import { z } from "zod";
import { requireRole } from "@/lib/auth/principal";
import { getDatabase } from "@/lib/db/client";
import { recordAudit } from "@/lib/db/queries/audit";
import { errorResponse } from "@/lib/errors";
import { assertSameOrigin, parseWith, readJson } from "@/lib/http";
import { pruneCheckpoints } from "@/lib/runtime/retention";

export const dynamic = "force-dynamic";

const pruneBody = z.object({
  keepLatest: z.number().int().min(1).max(1_000_000),
  /** Only checkpoints older than this many seconds are candidates. */
  olderThanSeconds: z
    .number()
    .int()
    .min(0)
    .max(10 * 365 * 86_400),
  dryRun: z.boolean().optional(),
});

/** Retention (supervisors): the same pruning as `npm run prune`, reported and written to the audit trail. */
export async function POST(request: Request) {
  try {
    assertSameOrigin(request);
    const by = await requireRole(request, "supervisor");
    const body = parseWith(pruneBody, await readJson(request), "bad_request:prune", "The prune request");
    const { db } = await getDatabase();
    const report = await pruneCheckpoints({
      db,
      keepLatest: body.keepLatest,
      olderThanMs: body.olderThanSeconds * 1000,
      dryRun: body.dryRun ?? false,
    });
    if (!report.dryRun) {
      await recordAudit({ db, entries: [{ action: "prune", actor: by, detail: { ...report } }] });
    }
    return Response.json(report);
  } catch (error) {
    return errorResponse(error, "POST /api/retention/prune");
  }
}
