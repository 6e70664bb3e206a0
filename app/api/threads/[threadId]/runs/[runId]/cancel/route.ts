import { json, route } from "@/lib/http/route";
import { cancelRun } from "@/lib/runtime/runs/cancel";

export const dynamic = "force-dynamic";

/**
 * Stop a thread's active run (operators and up; audited): 200 `{ runId, status }` — `cancelled` once the run ended
 * (within a few seconds), `cancelling` if its instance has not stopped it yet — 409 `conflict:run_finished` for a run
 * that already ended, 404 for a run the thread does not have. The open stream ends with RUN_ERROR
 * `conflict:run_cancelled`; the thread stays at its last checkpoint ("Try again" continues it, a fork branches it).
 */
export const POST = route<{ threadId: string; runId: string }>(
  { name: "POST /api/threads/[threadId]/runs/[runId]/cancel", access: "operator" },
  async ({ params: { threadId, runId }, principal, database: { db } }) =>
    json(await cancelRun({ db, threadId, runId, by: principal })),
);
