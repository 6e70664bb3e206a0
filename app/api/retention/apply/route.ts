import { z } from "zod";
import { json, route } from "@/lib/http/route";
import { applyRetention, RETENTION_STEPS } from "@/lib/runtime/retention/retention-policy";

export const dynamic = "force-dynamic";

const applyBody = z.strictObject({
  dryRun: z.boolean().optional(),
  /** Which policy steps to run (default all). */
  steps: z.array(z.enum(RETENTION_STEPS)).min(1).max(3).optional(),
});

/**
 * Apply the retention policy (admins): the same policy and code as `npm run prune` — truncate finished histories,
 * compact finished event logs, archive old finished threads. Returns the report; audited unless a dry run.
 */
export const POST = route(
  {
    name: "POST /api/retention/apply",
    access: "admin",
    body: { schema: applyBody, code: "bad_request:retention", what: "The retention request" },
  },
  async ({ body, principal, database: { db } }) =>
    json(await applyRetention({ db, actor: principal, dryRun: body.dryRun ?? false, steps: body.steps })),
);
