"use client";

import { type FormEvent, useState } from "react";
import { Button } from "@/components/ui/button";
import { errorMessage, postJson } from "@/components/ui/fetch-json";
import { controlClass, FieldLabel } from "@/components/ui/field";
import { useHydrated } from "@/components/ui/use-hydrated";

/** The retention policy as the server runs it (lib/runtime/retention/retention-policy.ts), in readable units. */
export interface RetentionPolicySummary {
  keepCheckpoints: number;
  truncateAfterHours: number;
  compactAfterMinutes: number;
  /** Null: threads are never archived. */
  archiveAfterDays: number | null;
  archiveDir: string;
}

interface StepReport {
  step: "history" | "events" | "archive";
  threadsChanged: number;
  threadsSkipped: number;
  checkpointsDeleted: number;
  eventsDeleted: number;
  rootsMarked: number;
  threadsArchived: number;
}

interface ErasureReport {
  customerRef: string;
  threads: number;
  rows: Record<string, number>;
  auditRows: number;
  alreadyErased?: boolean;
}

const heading = "text-lg font-semibold text-slate-900";
const STEP_NAMES = { history: "History", events: "Event log", archive: "Archive" } as const;

function stepText(s: StepReport): string {
  if (s.step === "history") {
    return `${s.threadsChanged} threads truncated, ${s.checkpointsDeleted} checkpoints deleted`;
  }
  if (s.step === "events")
    return `${s.threadsChanged} threads compacted, ${s.eventsDeleted} events merged away`;
  return `${s.threadsArchived} threads archived and deleted`;
}

/**
 * Retention and erasure for admins: the policy (the same one `npm run prune` applies), a dry run that counts what it
 * would change, applying it, and erasing one customer's personal data. Everything goes through the API, which checks
 * the role again and writes the audit trail.
 */
export function RetentionPanel({ policy }: { policy: RetentionPolicySummary }) {
  const hydrated = useHydrated();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [report, setReport] = useState<{ dryRun: boolean; steps: StepReport[] } | null>(null);
  const [erased, setErased] = useState<ErasureReport | null>(null);

  const run = async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  const apply = (dryRun: boolean) =>
    run(async () => setReport(await postJson("/api/retention/apply", { dryRun })));
  const erase = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const name = String(form.get("name") ?? "").trim();
    run(async () =>
      setErased(
        await postJson("/api/admin/erasure", { email: String(form.get("email")), ...(name ? { name } : {}) }),
      ),
    );
  };

  return (
    <>
      <section aria-labelledby="retention-heading" className="space-y-3" data-testid="retention-panel">
        <h2 id="retention-heading" className={heading}>
          Retention
        </h2>
        <ul className="list-disc space-y-1 pl-5 text-sm text-slate-800">
          <li>
            Finished threads keep the last {policy.keepCheckpoints} checkpoints of their history once finished
            for {policy.truncateAfterHours} h; earlier steps are pruned.
          </li>
          <li>The event log of a finished run is compacted after {policy.compactAfterMinutes} min.</li>
          <li>
            {policy.archiveAfterDays === null
              ? "Threads are never archived."
              : `Finished threads idle for ${policy.archiveAfterDays} days are archived to ${policy.archiveDir} and deleted.`}{" "}
            Decisions, side effects and the audit trail always stay.
          </li>
        </ul>
        <div className="flex gap-2">
          <Button variant="secondary" disabled={!hydrated || busy} onClick={() => apply(true)}>
            Preview
          </Button>
          <Button disabled={!hydrated || busy} onClick={() => apply(false)}>
            Apply policy now
          </Button>
        </div>
        {report && (
          <div role="status" className="text-sm text-slate-800" data-testid="retention-report">
            <p className="font-semibold">{report.dryRun ? "Would change:" : "Changed:"}</p>
            <ul className="list-disc pl-5">
              {report.steps.map((s) => (
                <li key={s.step}>
                  {STEP_NAMES[s.step]}: {stepText(s)}
                  {s.threadsSkipped > 0 ? ` (${s.threadsSkipped} skipped: busy or waiting)` : ""}
                </li>
              ))}
            </ul>
          </div>
        )}
      </section>

      <section aria-labelledby="erasure-heading" className="space-y-3">
        <h2 id="erasure-heading" className={heading}>
          Erase a customer
        </h2>
        <p className="text-sm text-slate-800">
          Replaces the customer&apos;s email address, name and the values their agents mark personal with
          placeholders in their own threads, orders, account and audit entries — nobody else&apos;s. Their
          threads stay readable. This cannot be undone; it is recorded in the audit trail.
        </p>
        <form onSubmit={erase} className="grid max-w-xl gap-3 sm:grid-cols-2">
          <div>
            <FieldLabel htmlFor="erase-email">Customer email</FieldLabel>
            <input id="erase-email" name="email" type="email" required className={controlClass} />
          </div>
          <div>
            <FieldLabel htmlFor="erase-name" hint="optional">
              Other spelling of the name
            </FieldLabel>
            <input id="erase-name" name="name" minLength={3} className={controlClass} />
          </div>
          <div className="sm:col-span-2">
            <Button type="submit" variant="danger" disabled={!hydrated || busy}>
              Erase customer data
            </Button>
          </div>
        </form>
        {erased && (
          <p role="status" className="text-sm text-slate-800" data-testid="erasure-report">
            {erased.alreadyErased ? (
              <>Customer {erased.customerRef} was erased before: nothing left to change.</>
            ) : (
              <>
                Erased customer {erased.customerRef}: {erased.threads} threads,{" "}
                {Object.values(erased.rows).reduce((a, b) => a + b, 0)} rows and {erased.auditRows} audit
                entries.
              </>
            )}
          </p>
        )}
      </section>
      {error && (
        <p role="alert" className="text-sm text-red-800">
          {error}
        </p>
      )}
    </>
  );
}
