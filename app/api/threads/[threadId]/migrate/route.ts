import { z } from "zod";
import { AppError } from "@/lib/contract/errors";
import { json, route } from "@/lib/http/route";
import { migrateThread } from "@/lib/runtime/runs/migrate";

export const dynamic = "force-dynamic";

const migrateBody = z.strictObject({});

/**
 * Move a paused thread onto its agent's current version by the migration that version declares (supervisors): 202
 * with the migration's run, or 409 `conflict:no_migration` saying why not. The sweeper does the same on its own;
 * this is for a thread a supervisor is looking at (e.g. after a failed migration was fixed and deployed).
 */
export const POST = route<{ threadId: string }, z.infer<typeof migrateBody>>(
  {
    name: "POST /api/threads/[threadId]/migrate",
    startsRun: true,
    access: "supervisor",
    body: { schema: migrateBody, code: "bad_request:migrate", what: "The migration request" },
  },
  async ({ params: { threadId }, database }) => {
    const outcome = await migrateThread({ database, threadId });
    if (outcome.status !== "started") {
      throw new AppError("conflict:no_migration", `This thread cannot be migrated: ${outcome.reason}.`);
    }
    return json(outcome, { status: 202 });
  },
);
