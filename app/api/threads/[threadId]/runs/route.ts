import type { z } from "zod";
import { AppError } from "@/lib/contract/errors";
import { json, route } from "@/lib/http/route";
import { startOrQueueRun } from "@/lib/runtime/runs/start";
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
  async ({ request, params: { threadId }, body: input, principal, database }) => {
    if (input.threadId !== threadId) {
      throw new AppError("bad_request:thread_mismatch", "threadId in the body does not match the URL.");
    }
    const started = await startOrQueueRun({ database, threadId, input, principal, signal: request.signal });
    return "queued" in started ? json(started.queued, { status: 202 }) : started.stream;
  },
);
