import type { z } from "zod";
import { AppError } from "@/lib/contract/errors";
import { json, route } from "@/lib/http/route";
import { env } from "@/lib/platform/env";
import { stopForNewerInput } from "@/lib/runtime/runs/cancel";
import { claimRun } from "@/lib/runtime/runs/claim";
import { startedWith, startRunInBackground } from "@/lib/runtime/runs/executor";
import { eventStreamResponse } from "@/lib/runtime/runs/stream";
import { runBody } from "./schema";

export const dynamic = "force-dynamic";

/**
 * Start or resume a run with an AG-UI RunAgentInput and stream its events (SSE). Refusals before the stream starts
 * are JSON errors; once streaming, failures arrive as RUN_ERROR. The run itself executes in the background.
 * Operators decide; an intake key may only start the first run of a ticket it filed (claimRun checks which run).
 * New input while a run is active follows the agent's double-texting strategy (`multitask`): 409 `conflict:run_active`
 * (reject), or queued to run next (enqueue; interrupt and rollback also stop the current run), answered 202
 * `{ queued: true, runId, position, events }`.
 */
export const POST = route<{ threadId: string }, z.infer<typeof runBody>>(
  {
    name: "POST /api/threads/[threadId]/runs",
    startsRun: true,
    access: { intakeOr: "operator" },
    body: { schema: runBody, code: "bad_request:run_input", what: "The RunAgentInput" },
  },
  async ({ request, params: { threadId }, body: input, principal, database: { db } }) => {
    if (input.threadId !== threadId) {
      throw new AppError("bad_request:thread_mismatch", "threadId in the body does not match the URL.");
    }
    const claimed = await claimRun({ db, threadId, input, principal, leaseMs: env.RUN_LEASE_MS });
    if ("queued" in claimed) {
      // The thread was busy and its agent queues new input: it runs after the current run (which `interrupt` and
      // `rollback` stop) as run `runId`, followed on `events` like any run. No stream is held open meanwhile: the
      // wait may be for a person's decision.
      stopForNewerInput(claimed.stopping, principal);
      const { queued, startSeq, position } = claimed;
      return json(
        {
          queued: true,
          runId: queued.id,
          strategy: queued.strategy,
          position,
          stopping: claimed.stopping,
          events: `/api/threads/${encodeURIComponent(threadId)}/events?after=${startSeq}`,
        },
        { status: 202 },
      );
    }
    // The stream first: it hears the run's events from the first one on, so it need not read the log to start.
    const response = eventStreamResponse(
      { db, threadId, afterSeq: claimed.startSeq, runId: claimed.run.id, fresh: true },
      request.signal,
    );
    startRunInBackground(claimed.run, claimed.startSeq, startedWith(claimed));
    return response;
  },
);
