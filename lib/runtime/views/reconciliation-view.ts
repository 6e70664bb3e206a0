import "server-only";
import {
  FINDING_WORDS,
  type FindingView,
  type ReconciliationRunView,
  type ReconciliationView,
} from "@/lib/contract/views/reconciliation";
import { countOpenFindings, listFindings, listReconciliationRuns } from "@/lib/db/queries/provider";
import type { ProviderFinding, ReconciliationRun } from "@/lib/db/schema";
import type { Queryable } from "@/lib/db/tx";
import { reconciledProvider } from "@/lib/delivery/reconcile-schedule";
import { env } from "@/lib/platform/env";

export type { ReconciliationView };

export function findingView(f: ProviderFinding): FindingView {
  return {
    id: f.id,
    kind: f.kind,
    title: FINDING_WORDS[f.kind] ?? f.kind,
    provider: f.provider,
    providerRef: f.providerRef,
    effectId: f.effectId,
    threadId: f.threadId,
    orderId: f.orderId,
    ledger: f.ledger,
    providerSide: f.providerSide,
    status: f.status === "handled" ? "handled" : "open",
    resolvedBy: f.resolvedBy,
    resolvedAt: f.resolvedAt?.toISOString() ?? null,
    createdAt: f.createdAt.toISOString(),
  };
}

export function runView(r: ReconciliationRun): ReconciliationRunView {
  return {
    id: r.id,
    provider: r.provider,
    instance: r.instance,
    since: r.since.toISOString(),
    until: r.until.toISOString(),
    startedAt: r.startedAt.toISOString(),
    finishedAt: r.finishedAt?.toISOString() ?? null,
    outcome: r.outcome,
    providerCount: r.providerCount,
    ledgerCount: r.ledgerCount,
    found: r.found,
    error: r.error,
  };
}

/** The report page: the schedule, the last runs and the findings (open first). */
export async function loadReconciliationView(db: Queryable): Promise<ReconciliationView> {
  const [open, handled, runs, openFindings] = await Promise.all([
    listFindings({ db, status: "open" }),
    listFindings({ db, status: "handled", limit: 50 }),
    listReconciliationRuns({ db, limit: 20 }),
    countOpenFindings({ db }),
  ]);
  const provider = reconciledProvider();
  return {
    provider,
    everyMs: provider ? env.RECONCILE_SCHEDULE : null,
    webhook: !!env.STRIPE_WEBHOOK_SECRET,
    openFindings,
    runs: runs.map(runView),
    findings: [...open, ...handled].map(findingView),
  };
}
