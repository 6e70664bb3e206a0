import { RunAgentInputSchema } from "@ag-ui/core/schemas";
import { getDatabase } from "@/lib/db/client";
import { env } from "@/lib/env";
import { AppError, errorResponse } from "@/lib/errors";
import { assertSameOrigin, parseWith, readJson } from "@/lib/http";
import { claimRun } from "@/lib/runtime/claim";
import { startRunInBackground } from "@/lib/runtime/executor";
import { eventStreamResponse } from "@/lib/runtime/stream";

export const dynamic = "force-dynamic";

/**
 * Start or resume a run with an AG-UI RunAgentInput and stream its events (SSE). Refusals before the stream starts
 * are JSON errors; once streaming, failures arrive as RUN_ERROR. The run itself executes in the background.
 */
export async function POST(request: Request, { params }: { params: Promise<{ threadId: string }> }) {
  try {
    assertSameOrigin(request);
    const { threadId } = await params;
    const input = parseWith(
      RunAgentInputSchema,
      await readJson(request),
      "bad_request:run_input",
      "The RunAgentInput",
    );
    if (input.threadId !== threadId) {
      throw new AppError("bad_request:thread_mismatch", "threadId in the body does not match the URL.");
    }
    const actor =
      typeof input.forwardedProps?.actor === "string" ? input.forwardedProps.actor.slice(0, 100) : "operator";
    const { db } = await getDatabase();
    const { run, startSeq } = await claimRun(db, { threadId, input, actor, leaseMs: env.RUN_LEASE_MS });
    startRunInBackground(run, startSeq);
    return eventStreamResponse({ db, threadId, afterSeq: startSeq, runId: run.id }, request.signal);
  } catch (error) {
    return errorResponse(error, "POST /api/threads/[threadId]/runs");
  }
}
