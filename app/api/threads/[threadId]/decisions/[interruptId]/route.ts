import { z } from "zod";
import { json, route } from "@/lib/http/route";
import { decideAndResume } from "@/lib/runtime/runs/decide";

export const dynamic = "force-dynamic";

const decideBody = z.strictObject({
  /** `resolved` (with `answer`) or `cancelled`. */
  status: z.enum(["resolved", "cancelled"]).default("resolved"),
  /** The answer, validated against the interrupt's contract. */
  answer: z.unknown().optional(),
});

/**
 * Answer one decision on its own — for threads waiting for several at once (parallel reviews, each answered by its
 * own person). 200 `{ resumed: false, waitingFor }` while others are pending; 202 `{ resumed: true, runId, events }`
 * when this was the last one and the run resumed with every answer (follow it on `events`). Same refusals as a resume.
 */
export const POST = route<{ threadId: string; interruptId: string }, z.infer<typeof decideBody>>(
  {
    name: "POST /api/threads/[threadId]/decisions/[interruptId]",
    startsRun: true,
    access: "operator",
    body: { schema: decideBody, code: "bad_request:decision", what: "The decision" },
  },
  async ({ params: { threadId, interruptId }, body, principal, database }) => {
    const entry = { interruptId, status: body.status, payload: body.answer };
    const result = await decideAndResume({ database, threadId, entry, principal });
    return json(result, { status: result.resumed ? 202 : 200 });
  },
);
