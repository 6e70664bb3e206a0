import "server-only";
import { type BaseCheckpointSaver, MemorySaver, type PendingWrite } from "@langchain/langgraph-checkpoint";

/**
 * A scratch copy of one thread's checkpoints (every namespace, with their pending writes) in memory: a graph run on it
 * goes on from where the thread stands and writes only here. For the deploy shadow (lib/runtime/agents/shadow.ts),
 * which must see what a build would do with a paused thread without touching the thread.
 */
class ScratchSaver extends MemorySaver {
  constructor(private readonly source: BaseCheckpointSaver) {
    super(source.serde);
  }

  /** The source's versions (ours are strings typed as numbers: see DrizzleCheckpointSaver.getNextVersion). */
  override getNextVersion(current: number | undefined): number {
    return this.source.getNextVersion(current);
  }
}

/** Copy `threadId`'s checkpoints from `source` into a new scratch saver (oldest first, parents before children). */
export async function scratchCopy(
  source: BaseCheckpointSaver,
  threadId: string,
): Promise<BaseCheckpointSaver> {
  const scratch = new ScratchSaver(source);
  const tuples = [];
  for await (const tuple of source.list({ configurable: { thread_id: threadId } })) tuples.push(tuple);
  for (const tuple of tuples.reverse()) {
    const ns = (tuple.config.configurable?.checkpoint_ns as string | undefined) ?? "";
    const parentId = tuple.parentConfig?.configurable?.checkpoint_id as string | undefined;
    const stored = await scratch.put(
      {
        configurable: {
          thread_id: threadId,
          checkpoint_ns: ns,
          ...(parentId ? { checkpoint_id: parentId } : {}),
        },
      },
      tuple.checkpoint,
      tuple.metadata ?? { source: "loop", step: -1, parents: {} },
    );
    const byTask = new Map<string, PendingWrite[]>();
    for (const [taskId, channel, value] of tuple.pendingWrites ?? []) {
      const writes = byTask.get(taskId) ?? [];
      writes.push([channel, value]);
      byTask.set(taskId, writes);
    }
    for (const [taskId, writes] of byTask) await scratch.putWrites(stored, writes, taskId);
  }
  return scratch;
}
