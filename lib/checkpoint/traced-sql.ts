import "server-only";
import type { RunnableConfig } from "@langchain/core/runnables";
import type {
  ChannelVersions,
  Checkpoint,
  CheckpointMetadata,
  PendingWrite,
  SerializerProtocol,
} from "@langchain/langgraph-checkpoint";
import { DrizzleCheckpointSaver } from "@/lib/checkpoint/saver";
import type { SqlClient } from "@/lib/db/sql-client";
import { inSpan } from "../platform/observability/tracing";

/** The saver call each of its named read statements serves (one statement per call: `lib/checkpoint/saver.ts`). */
const SAVER_CALLS: Record<string, string> = {
  cp_get_by_id: "getTuple",
  cp_get_latest: "getTuple",
  cp_delete_thread: "deleteThread",
};

/**
 * The checkpointer's SQL client with a span per saver read (`saver getTuple`, `saver list`…) inside the active trace.
 * Outside a trace it adds nothing but one context lookup. Wrapping the client keeps the saver itself unaware.
 * The shared write statement does not go through it (it may carry other runs' writes): each `put` / `putWrites` is
 * spanned where it is called instead ({@link TracedCheckpointSaver}).
 */
export function tracedSaverSql(sql: SqlClient): SqlClient {
  return {
    query<R>(text: string, params?: readonly unknown[], name?: string): Promise<R[]> {
      const call = (name && SAVER_CALLS[name]) ?? "list";
      return inSpan(`saver ${call}`, { "db.operation.name": call }, () => sql.query<R>(text, params, name));
    },
  };
}

/**
 * Our saver with a span per call in the caller's trace: `saver put`, `saver putWrites` (serializing, waiting for a
 * shared statement and its commit: the time LangGraph waits), and the reads through {@link tracedSaverSql}.
 */
export class TracedCheckpointSaver extends DrizzleCheckpointSaver {
  constructor(sql: SqlClient, serde?: SerializerProtocol, stamp?: Readonly<Record<string, string>>) {
    // Writes go through the batcher of the client itself, shared with the runs' event sinks.
    super(tracedSaverSql(sql), serde, stamp, sql);
  }

  override put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    return inSpan("saver put", { "db.operation.name": "put" }, () =>
      super.put(config, checkpoint, metadata, newVersions),
    );
  }

  override putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath?: string) {
    return inSpan("saver putWrites", { "db.operation.name": "putWrites" }, () =>
      super.putWrites(config, writes, taskId, taskPath),
    );
  }
}
