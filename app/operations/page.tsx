import type { Metadata } from "next";
import { OperationsDashboard } from "@/components/operations/operations-dashboard";
import { answeringPage, requirePageUser } from "@/lib/auth/page";
import { principalOfUser, teamScope } from "@/lib/auth/teams";
import { getDatabase } from "@/lib/db/client";
import { loadOperationsView } from "@/lib/runtime/views/operations-view";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Operations" };

/**
 * How the queue is doing, for supervisors: pending decisions and the oldest one's age now and over the last day,
 * decisions per hour by outcome, and failed runs and effects. The current numbers come from the same query as the
 * gauges of `/api/metrics`; the history from the queue samples and the decision ledger.
 */
async function OperationsPage() {
  const user = await requirePageUser("/operations", "supervisor");
  const { db } = await getDatabase();
  const { hiddenAgents } = await teamScope(db, principalOfUser(user));
  const view = await loadOperationsView(db, hiddenAgents);
  return (
    <div className="space-y-5" data-testid="operations-page">
      <div>
        <h1 className="text-2xl font-semibold">Operations</h1>
        <p className="mt-1 text-sm text-slate-700">
          The queue now and over the last 24 hours. The same numbers are at <code>/api/metrics</code> for
          Prometheus.
        </p>
      </div>
      <OperationsDashboard view={view} />
    </div>
  );
}

export default answeringPage(OperationsPage);
