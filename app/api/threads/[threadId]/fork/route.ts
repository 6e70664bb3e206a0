import { z } from "zod";
import { json, route } from "@/lib/route";
import { forkThread } from "@/lib/runtime/fork";

export const dynamic = "force-dynamic";

const forkBody = z.strictObject({
  checkpointId: z.string().min(1).max(200),
  /** State edits applied on the branch before it runs: only the agent's editable fields (422 naming any other). */
  values: z.unknown().optional(),
  /** Apply `values` as if this node wrote them (decides what runs next): one of the agent's fork nodes. */
  asNode: z.string().min(1).max(100).optional(),
  /** `current`: branch onto the agent's current version (for a thread whose version is no longer deployed). */
  onto: z.literal("current").optional(),
});

/**
 * Time travel: branch the thread from a checkpoint (optionally editing the request first), make the branch the head
 * and run it. Answers 202 with the run id, the branch's first checkpoint, side-effect warnings and the seq to stream
 * the run's events after (`GET …/events?after=`).
 */
export const POST = route<{ threadId: string }, z.infer<typeof forkBody>>(
  {
    name: "POST /api/threads/[threadId]/fork",
    startsRun: true,
    access: "supervisor",
    body: { schema: forkBody, code: "bad_request:fork", what: "The fork request" },
  },
  async ({ params: { threadId }, body, principal }) => {
    const result = await forkThread({ threadId, by: principal, ...body });
    return json(
      { ...result, events: `/api/threads/${threadId}/events?after=${result.afterSeq}` },
      { status: 202 },
    );
  },
);
