import { json, route } from "@/lib/http/route";
import { answerDifferently } from "@/lib/runtime/runs/answer-differently";

export const dynamic = "force-dynamic";

/**
 * "Answer differently" (supervisors, like any fork): branch from where this decision was asked, so the question is
 * asked again on the branch. 202 with the fork's answer (run id, the branch's first checkpoint, side-effect warnings,
 * the events to follow); 409 `conflict:decision_not_taken` for a decision not answered, 409 while a run is active.
 */
export const POST = route<{ threadId: string; interruptId: string }>(
  {
    name: "POST /api/threads/[threadId]/decisions/[interruptId]/answer-differently",
    startsRun: true,
    access: "supervisor",
  },
  async ({ params: { threadId, interruptId }, principal, database }) => {
    const result = await answerDifferently({ database, threadId, interruptId, by: principal });
    return json(
      { ...result, events: `/api/threads/${threadId}/events?after=${result.afterSeq}` },
      { status: 202 },
    );
  },
);
