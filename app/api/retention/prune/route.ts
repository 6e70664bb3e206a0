import { z } from "zod";
import { json, route } from "@/lib/http/route";
import { pruneOnRequest } from "@/lib/runtime/retention/retention";

export const dynamic = "force-dynamic";

const pruneBody = z.strictObject({
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
export const POST = route(
  {
    name: "POST /api/retention/prune",
    access: "supervisor",
    body: { schema: pruneBody, code: "bad_request:prune", what: "The prune request" },
  },
  async ({ body, principal, database: { db } }) => {
    const report = await pruneOnRequest({
      db,
      keepLatest: body.keepLatest,
      olderThanMs: body.olderThanSeconds * 1000,
      dryRun: body.dryRun ?? false,
      by: principal,
    });
    return json(report);
  },
);
