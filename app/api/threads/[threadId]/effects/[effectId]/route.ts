import { z } from "zod";
import { EFFECT_TASK_ACTIONS } from "@/lib/contract/wire";
import { json, route } from "@/lib/http/route";
import { actOnEffectTask } from "@/lib/runtime/views/effects";

export const dynamic = "force-dynamic";

const taskBody = z.strictObject({
  /** retry (deliver again), refunded_manually (payments), confirmed_delivered (unconfirmed emails), mark_handled. */
  action: z.enum(EFFECT_TASK_ACTIONS),
  note: z.string().trim().max(2000).optional(),
});

/** Act on a failed effect's operator task; answers the effect as it is now. 409 when there is no open task. */
export const POST = route<{ threadId: string; effectId: string }, z.infer<typeof taskBody>>(
  {
    name: "POST /api/threads/[threadId]/effects/[effectId]",
    access: "operator",
    body: { schema: taskBody, code: "bad_request:effect_task", what: "The effect task" },
  },
  async ({ params: { threadId, effectId }, body, principal, database: { db } }) =>
    json(await actOnEffectTask({ db, threadId, effectId, action: body.action, note: body.note, principal })),
);
