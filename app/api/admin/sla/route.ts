import { json, route } from "@/lib/http/route";
import {
  changeSlaPolicy,
  readSlaPolicies,
  type SlaPolicyChange,
  slaPolicyChange,
} from "@/lib/queue/settings/sla-policies";

export const dynamic = "force-dynamic";

/** Deadline policies per action and amount (supervisors read them). */
export const GET = route({ name: "GET /api/admin/sla", access: "supervisor" }, async ({ database: { db } }) =>
  json({ policies: await readSlaPolicies({ db }) }),
);

/** Create, replace or remove a deadline policy (admin; audited). Applies to decisions raised from now on. */
export const POST = route<Record<string, never>, SlaPolicyChange>(
  {
    name: "POST /api/admin/sla",
    access: "admin",
    body: { schema: slaPolicyChange, code: "bad_request:sla", what: "The deadline policy" },
  },
  async ({ body, principal, database: { db } }) =>
    json(await changeSlaPolicy({ db, change: body, by: principal })),
);
