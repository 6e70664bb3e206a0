/*
 * The payment provider's truth against the ledger: the reconciliation's schedule and last runs, and the differences
 * found (each an operator task with both sides). Types only: the server loads it in
 * lib/runtime/views/reconciliation-view.ts.
 */

/** The differences a reconciliation (or a webhook) finds, in the operator's words. */
export const FINDING_WORDS: Record<string, string> = {
  missing_in_ledger: "Paid at the provider, not recorded here",
  missing_at_provider: "Recorded as paid here, unknown to the provider",
  amount_differs: "Amount or currency differs",
  outside_console: "Refund made outside the console",
  failed_after_success: "Failed at the provider after it succeeded",
  dispute: "Payment disputed by the customer",
};

export interface FindingView {
  id: string;
  kind: string;
  /** `FINDING_WORDS[kind]`, or the kind itself for one this build does not know. */
  title: string;
  provider: string;
  providerRef: string | null;
  effectId: string | null;
  threadId: string | null;
  orderId: string | null;
  ledger: Record<string, unknown> | null;
  providerSide: Record<string, unknown> | null;
  status: "open" | "handled";
  resolvedBy: string | null;
  resolvedAt: string | null;
  createdAt: string;
}

export interface ReconciliationRunView {
  id: string;
  provider: string;
  instance: string;
  since: string;
  until: string;
  startedAt: string;
  finishedAt: string | null;
  outcome: string | null;
  providerCount: number;
  ledgerCount: number;
  found: number;
  error: string | null;
}

export interface ReconciliationView {
  /** The provider compared with: null for the simulator (nothing to compare). */
  provider: "stripe" | "http" | null;
  /** RECONCILE_SCHEDULE (null: off). */
  everyMs: number | null;
  /** Whether Stripe's webhook is configured (STRIPE_WEBHOOK_SECRET). */
  webhook: boolean;
  openFindings: number;
  runs: ReconciliationRunView[];
  findings: FindingView[];
}
