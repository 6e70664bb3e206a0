import "server-only";
import { INTERRUPT, RESUME } from "@langchain/langgraph-checkpoint";
import { getTableName } from "drizzle-orm";
import { checkpoints, checkpointWrites } from "@/lib/db/schema";
import type { SqlClient } from "@/lib/db/sql-client";

const CP = `"${getTableName(checkpoints)}"`;
const WR = `"${getTableName(checkpointWrites)}"`;

/** A write recorded against a checkpoint, without its value. */
export interface HistoryWrite {
  /** Node that wrote (from the task path), or the raw task path for tasks that are not node pulls. */
  node: string;
  taskId: string;
  channel: string;
}

/** One checkpoint as the history viewer lists it: metadata only, no channel values. */
export interface HistoryEntry {
  checkpointId: string;
  parentCheckpointId: string | null;
  checkpointNs: string;
  step: number | null;
  source: string | null;
  /** When LangGraph created the checkpoint (its `ts`), ISO 8601. */
  createdAt: string;
  /** Writes of the tasks that ran from this checkpoint (they produced its children). */
  writes: HistoryWrite[];
  /** Interrupts raised from this checkpoint. */
  interruptCount: number;
  /** Interrupts raised here that no resume answered and no child checkpoint moved past. */
  pendingInterrupts: boolean;
  /** Number of checkpoints whose parent is this one (more than one: branches start here). */
  childCount: number;
}

export interface HistoryPage {
  entries: HistoryEntry[];
  /** Pass as `before` for the next (older) page; null on the last page. */
  nextCursor: string | null;
}

interface HistoryRow {
  checkpoint_id: string;
  parent_checkpoint_id: string | null;
  checkpoint_ns: string;
  step: number | null;
  source: string | null;
  ts: string | null;
  write_task_ids: string[] | null;
  write_task_paths: string[] | null;
  write_channels: string[] | null;
  interrupt_count: number;
  resumed: boolean;
  child_count: number;
}

/*
 * Reads only the checkpoint row's metadata columns, the keys of its writes and a count of its children: no blob is
 * read and no value deserialized. The child count uses the (thread, ns, parent) index.
 */
const HISTORY_SQL = `SELECT cp.checkpoint_id, cp.parent_checkpoint_id, cp.checkpoint_ns,
  (cp.metadata ->> 'step')::int AS step, cp.metadata ->> 'source' AS source, cp.checkpoint ->> 'ts' AS ts,
  w.task_ids AS write_task_ids, w.task_paths AS write_task_paths, w.channels AS write_channels,
  coalesce(w.interrupt_count, 0)::int AS interrupt_count, coalesce(w.resumed, false) AS resumed,
  (SELECT count(*) FROM ${CP} c
    WHERE c.thread_id = cp.thread_id AND c.checkpoint_ns = cp.checkpoint_ns
      AND c.parent_checkpoint_id = cp.checkpoint_id)::int AS child_count
FROM (
  SELECT * FROM ${CP}
  WHERE thread_id = $1 AND checkpoint_ns = $2 AND ($3::text IS NULL OR checkpoint_id < $3::text)
  ORDER BY checkpoint_id DESC LIMIT $4
) cp
LEFT JOIN LATERAL (
  SELECT array_agg(x.task_id ORDER BY x.task_path, x.task_id, x.idx) AS task_ids,
    array_agg(x.task_path ORDER BY x.task_path, x.task_id, x.idx) AS task_paths,
    array_agg(x.channel ORDER BY x.task_path, x.task_id, x.idx) AS channels,
    count(*) FILTER (WHERE x.channel = '${INTERRUPT}') AS interrupt_count,
    bool_or(x.channel = '${RESUME}') AS resumed
  FROM ${WR} x
  WHERE x.thread_id = cp.thread_id AND x.checkpoint_ns = cp.checkpoint_ns AND x.checkpoint_id = cp.checkpoint_id
) w ON true
ORDER BY cp.checkpoint_id DESC`;

const PULL_PREFIX = "~__pregel_pull, ";

function nodeOf(taskPath: string): string {
  return taskPath.startsWith(PULL_PREFIX) ? taskPath.slice(PULL_PREFIX.length) : taskPath;
}

/**
 * A page of a thread's checkpoints, newest first, for the history viewer. `before` is the cursor of the previous
 * page. One statement; cost does not grow with the size of the state.
 */
export async function listCheckpointHistory(
  sql: SqlClient,
  params: { threadId: string; checkpointNs?: string; before?: string | null; limit?: number },
): Promise<HistoryPage> {
  const limit = Math.min(Math.max(params.limit ?? 50, 1), 500);
  const rows = await sql.query<HistoryRow>(
    HISTORY_SQL,
    [params.threadId, params.checkpointNs ?? "", params.before ?? null, limit + 1],
    "cp_history",
  );
  const page = rows.slice(0, limit);
  return {
    entries: page.map((row) => {
      const taskIds = row.write_task_ids ?? [];
      return {
        checkpointId: row.checkpoint_id,
        parentCheckpointId: row.parent_checkpoint_id,
        checkpointNs: row.checkpoint_ns,
        step: row.step,
        source: row.source,
        createdAt: row.ts ?? "",
        writes: taskIds.map((taskId, i) => ({
          node: nodeOf(row.write_task_paths?.[i] ?? ""),
          taskId,
          channel: row.write_channels?.[i] ?? "",
        })),
        interruptCount: row.interrupt_count,
        pendingInterrupts: row.interrupt_count > 0 && !row.resumed && row.child_count === 0,
        childCount: row.child_count,
      };
    }),
    nextCursor: rows.length > limit ? (page[page.length - 1]?.checkpoint_id ?? null) : null,
  };
}
