import "server-only";
import { DrizzleCheckpointSaver } from "@/lib/checkpoint/saver";
import { getDatabase } from "@/lib/db/client";
import { env } from "@/lib/env";
import { buildRefundGraph, getChatModel } from "@/lib/graphs/refund";

export type RefundGraph = ReturnType<typeof buildRefundGraph>;

const KEY = Symbol.for("hitl-console.refund-graph");
type G = typeof globalThis & { [KEY]?: Promise<RefundGraph> };

/** The compiled refund graph on the process's database and checkpointer (one per process). */
export function getRefundGraph(): Promise<RefundGraph> {
  const g = globalThis as G;
  g[KEY] ??= (async () => {
    const database = await getDatabase();
    return buildRefundGraph({
      checkpointer: new DrizzleCheckpointSaver(database.sql),
      db: database.db,
      model: getChatModel(),
      refundNodeDelayMs: env.CHAOS_REFUND_DELAY_MS,
    });
  })().catch((error) => {
    delete g[KEY];
    throw error;
  });
  return g[KEY];
}
