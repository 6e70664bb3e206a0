import { json, route } from "@/lib/http/route";
import { checkpointSideEffects } from "@/lib/runtime/runs/side-effects";

export const dynamic = "force-dynamic";

/**
 * What a fork from this checkpoint would reach again: refunds and emails recorded after it (the same warnings the
 * fork answers with), so the console can warn before the operator forks. `{ warnings: SideEffectWarning[] }`.
 */
export const GET = route<{ threadId: string; checkpointId: string }>(
  { name: "GET /api/threads/[threadId]/checkpoints/[checkpointId]/side-effects", access: "viewer" },
  async ({ params, database }) =>
    json({ warnings: await checkpointSideEffects({ db: database.db, ...params }) }),
);
