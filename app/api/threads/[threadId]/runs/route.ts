import type { z } from "zod";
import { env } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { route } from "@/lib/route";
import { claimRun } from "@/lib/runtime/claim";
import { startRunInBackground } from "@/lib/runtime/executor";
import { eventStreamResponse } from "@/lib/runtime/stream";
import { runBody } from "./schema";

export const dynamic = "force-dynamic";

/**
 * Start or resume a run with an AG-UI RunAgentInput and stream its events (SSE). Refusals before the stream starts
 * are JSON errors; once streaming, failures arrive as RUN_ERROR. The run itself executes in the background.
 * Operators decide; an intake key may only start the first run of a ticket it filed (claimRun checks which run).
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
    const { run, startSeq } = await claimRun({ db, threadId, input, principal, leaseMs: env.RUN_LEASE_MS });
    startRunInBackground(run, startSeq);
    return eventStreamResponse({ db, threadId, afterSeq: startSeq, runId: run.id }, request.signal);
  },
);
