import { RunAgentInputSchema } from "@ag-ui/core/schemas";
import { requireIntakeOrRole } from "@/lib/auth/principal";
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
    // Operators decide; an intake key may only start a new ticket (claimRun checks which run this is).
    const principal = await requireIntakeOrRole(request, "operator");
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
    const { db } = await getDatabase();
    const { run, startSeq } = await claimRun(db, { threadId, input, principal, leaseMs: env.RUN_LEASE_MS });
    startRunInBackground(run, startSeq);
    return eventStreamResponse({ db, threadId, afterSeq: startSeq, runId: run.id }, request.signal);
  } catch (error) {
    return errorResponse(error, "POST /api/threads/[threadId]/runs");
  }
}
