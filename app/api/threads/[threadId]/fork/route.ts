import { type ForkBody, forkBody } from "@/app/api/threads/schema";
import { json, route } from "@/lib/http/route";
import { forkThread } from "@/lib/runtime/runs/fork";

export const dynamic = "force-dynamic";

/**
 * Time travel: branch the thread from a checkpoint (optionally editing the request first), make the branch the head
 * and run it. Answers 202 with the run id, the branch's first checkpoint, side-effect warnings and the seq to stream
 * the run's events after (`GET …/events?after=`).
 */
export const POST = route<{ threadId: string }, ForkBody>(
  {
    name: "POST /api/threads/[threadId]/fork",
    startsRun: true,
    access: "supervisor",
    body: { schema: forkBody, code: "bad_request:fork", what: "The fork request" },
  },
  async ({ params: { threadId }, body, principal, database }) => {
    const result = await forkThread({ database, threadId, by: principal, ...body });
    return json(
      { ...result, events: `/api/threads/${threadId}/events?after=${result.afterSeq}` },
      { status: 202 },
    );
  },
);
