import { json, route } from "@/lib/http/route";
import { loadReconciliationView } from "@/lib/runtime/views/reconciliation-view";

export const dynamic = "force-dynamic";

/** The reconciliation report: the provider compared with, the last runs, the findings (open first). Supervisors. */
export const GET = route(
  { name: "GET /api/reconciliation", access: "supervisor" },
  async ({ database: { db } }) => json(await loadReconciliationView(db)),
);
