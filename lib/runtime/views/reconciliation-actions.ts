import "server-only";
import { AppError } from "@/lib/contract/errors";
import type { Principal } from "@/lib/contract/roles";
import type { FindingView } from "@/lib/contract/views/reconciliation";
import { recordAudit } from "@/lib/db/queries/audit";
import { getFinding, resolveFinding } from "@/lib/db/queries/provider";
import { getScheduledJob } from "@/lib/db/queries/scheduled-jobs";
import type { Queryable } from "@/lib/db/tx";
import {
  RECONCILE_JOB,
  reconcileSourceFromEnv,
  runReconciliationIfDue,
} from "@/lib/delivery/reconcile-schedule";
import { findingView } from "./reconciliation-view";

/** Close a finding's operator task; audited. */
export async function closeFinding({
  db,
  findingId,
  note,
  principal,
}: {
  db: Queryable;
  findingId: string;
  note: string | null;
  principal: Principal;
}): Promise<FindingView> {
  const closed = await resolveFinding({ db, id: findingId, by: principal.label });
  if (!closed) {
    throw (await getFinding({ db, id: findingId }))
      ? new AppError("conflict:finding_closed", "This difference was closed already.")
      : new AppError("not_found:finding", "There is no such difference.");
  }
  await recordAudit({
    db,
    entries: [
      {
        action: "provider_finding",
        actor: principal,
        threadId: closed.threadId,
        detail: { findingId, kind: closed.kind, resolution: "mark_handled", ...(note ? { note } : {}) },
      },
    ],
  });
  return findingView(closed);
}

/** Run the reconciliation now (an admin asked), through the same lease as the schedule. */
export async function runReconciliationNow({ db, principal }: { db: Queryable; principal: Principal }) {
  const source = reconcileSourceFromEnv();
  if (!source)
    throw new AppError(
      "conflict:no_provider",
      "Payments are simulated here (no STRIPE_SECRET_KEY or PAYMENT_URL): there is nothing to reconcile with.",
    );
  const outcome = await runReconciliationIfDue(0, { source, db, holder: `admin:${principal.id}` });
  if (outcome === "not_due" || outcome === "busy")
    throw new AppError(
      "conflict:reconciling",
      "A reconciliation is running now; its report follows shortly.",
    );
  const job = await getScheduledJob({ db, name: RECONCILE_JOB });
  if (outcome === "failed")
    throw new AppError(
      "unavailable:provider",
      `The reconciliation could not finish (${job?.lastError ?? "the provider did not answer"}); try again.`,
    );
  return { outcome, report: job?.lastReport ?? null };
}
