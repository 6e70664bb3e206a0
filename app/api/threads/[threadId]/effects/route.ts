import { AppError } from "@/lib/contract/errors";
import { getThread } from "@/lib/db/queries/threads";
import { json, route } from "@/lib/http/route";
import { listEffectViews } from "@/lib/runtime/views/effects";

export const dynamic = "force-dynamic";

/** The thread's side effects (payments, emails) with their live delivery status, attempts, last error and task. */
export const GET = route<{ threadId: string }>(
  { name: "GET /api/threads/[threadId]/effects", access: "viewer" },
  async ({ params: { threadId }, database: { db } }) => {
    if (!(await getThread({ db, threadId }))) {
      throw new AppError("not_found:thread", `Thread ${threadId} does not exist.`);
    }
    return json({ effects: await listEffectViews({ db, threadId }) });
  },
);
