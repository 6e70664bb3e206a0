import { json, route } from "@/lib/http/route";
import { runReconciliationNow } from "@/lib/runtime/views/reconciliation-actions";

export const dynamic = "force-dynamic";

/**
 * Reconcile now, besides the schedule (admins): 200 with what the run compared and found; 409 `conflict:reconciling`
 * while an instance runs it, 409 `conflict:no_provider` when payments are simulated.
 */
export const POST = route(
  { name: "POST /api/reconciliation/run", access: "admin" },
  async ({ principal, database: { db } }) => json(await runReconciliationNow({ db, principal })),
);
