import "server-only";
import type { CheckpointRef } from "@/lib/checkpoint/history";
import { AppError } from "@/lib/contract/errors";
import type { Queryable } from "@/lib/db/tx";
import type { SideEffectWarning } from "../agents/registry";
import { agentOfThread } from "../agents/registry";

export type { SideEffectWarning };

/**
 * What forking at one checkpoint of a thread would reach again, as the thread's agent describes its side effects
 * (`not_found:thread` / `not_found:checkpoint`).
 */
export async function checkpointSideEffects({
  db,
  threadId,
  checkpointId,
}: CheckpointRef & { db: Queryable }): Promise<SideEffectWarning[]> {
  const { agent, graph } = await agentOfThread({ db, threadId, read: true });
  const state = await graph.getState({
    configurable: { thread_id: threadId, checkpoint_ns: "", checkpoint_id: checkpointId },
  });
  // An unknown checkpoint (or another thread's) reads as an empty snapshot without metadata.
  if (!state.metadata) {
    throw new AppError(
      "not_found:checkpoint",
      `Checkpoint ${checkpointId} of thread ${threadId} does not exist.`,
    );
  }
  return agent.effects({ db, threadId, values: (state.values ?? {}) as Record<string, unknown> });
}
