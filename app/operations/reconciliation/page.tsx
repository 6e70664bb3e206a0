import type { Metadata } from "next";
import { ReconciliationReport } from "@/components/operations/reconciliation-report";
import { answeringPage, requirePageUser } from "@/lib/auth/page";
import { getDatabase } from "@/lib/db/client";
import { loadReconciliationView } from "@/lib/runtime/views/reconciliation-view";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Reconciliation" };

/**
 * The payment provider's truth against the ledger, for supervisors: the reconciliation's last runs and every difference
 * found (by a run or a webhook), open ones first, each with both sides and its operator task.
 */
async function ReconciliationPage() {
  const user = await requirePageUser("/operations/reconciliation", "supervisor");
  const { db } = await getDatabase();
  const view = await loadReconciliationView(db);
  return (
    <div className="space-y-5" data-testid="reconciliation-page">
      <div>
        <h1 className="text-2xl font-semibold">Reconciliation</h1>
        <p className="mt-1 text-sm text-slate-700">
          What the payment provider holds, compared with what this console recorded. Every difference is a
          task until a supervisor closes it.
        </p>
      </div>
      <ReconciliationReport view={view} canRun={user.role === "admin"} />
    </div>
  );
}

export default answeringPage(ReconciliationPage);
