import "server-only";
import { AppError } from "@/lib/contract/errors";
import type { Principal } from "@/lib/contract/roles";
import { recordAudit } from "@/lib/db/queries/audit";
import { getRun, requestRunCancel } from "@/lib/db/queries/runs";
import type { Queryable } from "@/lib/db/tx";
import { newerMessageBy } from "./claim";
import { abortCancelledRun } from "./executor";
import { sweepSoon } from "./recovery";

/**
 * Stop an active run of a thread (operators and up; audited): the run is marked, the instance executing it aborts
 * its graph (here at once; elsewhere at the notification, or at its next heartbeat) and ends it `cancelled` with
 * RUN_FINISHED and AG-UI's `cancelled` outcome, leaving the thread at its last checkpoint with status `stopped` (a run
 * without new input continues it). A run nobody
 * executes (its owner died) is ended by whichever instance sweeps it next. Waits up to `waitMs` for the end.
 */
export async function cancelRun({
  db,
  threadId,
  runId,
  by,
  waitMs = 3_000,
}: {
  db: Queryable;
  threadId: string;
  runId: string;
  by: Principal;
  waitMs?: number;
}): Promise<{ runId: string; status: string }> {
  const request = await db.transaction(async (tx) => {
    const asked = await requestRunCancel({ db: tx, threadId, runId, by: by.label });
    if (asked.state === "requested") {
      await recordAudit({
        db: tx,
        entries: [{ action: "run_cancel", actor: by, threadId, detail: { runId } }],
      });
    }
    return asked;
  });
  if (request.state === "not_found") throw new AppError("not_found:run", "This thread has no such run.");
  if (request.state === "finished")
    throw new AppError("conflict:run_finished", `This run has already ended (${request.status}).`, {
      status: request.status,
    });
  if (!abortCancelledRun(runId, by.label) && !request.leaseLive) sweepSoon();
  const deadline = Date.now() + waitMs;
  for (;;) {
    const run = await getRun({ db, runId });
    if (run && run.status !== "queued" && run.status !== "running") return { runId, status: run.status };
    if (Date.now() > deadline) return { runId, status: "cancelling" };
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * After new input was queued behind a run it stops (double texting, `interrupt` / `rollback`): the run is aborted here
 * if it executes here; elsewhere its instance hears the notification (or its heartbeat finds the mark); a run nobody
 * executes is ended by the next sweep, which then starts the queue.
 */
export function stopForNewerInput(runId: string | null, by: Principal): void {
  if (!runId) return;
  if (!abortCancelledRun(runId, newerMessageBy(by))) sweepSoon();
}
