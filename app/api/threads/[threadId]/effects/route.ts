import { json, route } from "@/lib/http/route";
import { readThreadEffects } from "@/lib/runtime/views/effects";

export const dynamic = "force-dynamic";

/** The thread's side effects (payments, emails) with their live delivery status, attempts, last error and task. */
export const GET = route<{ threadId: string }>(
  { name: "GET /api/threads/[threadId]/effects", access: "viewer" },
  async ({ params: { threadId }, database: { db } }) =>
    json({ effects: await readThreadEffects({ db, threadId }) }),
);
