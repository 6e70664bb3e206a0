import "server-only";
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointTuple,
  type PendingWrite,
} from "@langchain/langgraph-checkpoint";

/**
 * A checkpointer that reads a thread's checkpoints from another saver and keeps nothing: what a graph writes through
 * it is dropped. For a replay that must see a paused thread as stored and change nothing in it (the runtime's
 * "would the code ask the same question?" check, lib/runtime/runs/asked-again.ts).
 */
export class ReadOnlySaver extends BaseCheckpointSaver {
  constructor(private readonly source: BaseCheckpointSaver) {
    super(source.serde);
  }

  getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    return this.source.getTuple(config);
  }

  list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    return this.source.list(config, options);
  }

  async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    _metadata: CheckpointMetadata,
    _newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    return {
      configurable: {
        thread_id: config.configurable?.thread_id,
        checkpoint_ns: config.configurable?.checkpoint_ns ?? "",
        checkpoint_id: checkpoint.id,
      },
    };
  }

  async putWrites(_config: RunnableConfig, _writes: PendingWrite[], _taskId: string): Promise<void> {}

  async deleteThread(_threadId: string): Promise<void> {}

  /** The source's versions (ours are strings typed as numbers: see DrizzleCheckpointSaver.getNextVersion). */
  override getNextVersion(current: number | undefined): number {
    return this.source.getNextVersion(current);
  }
}
