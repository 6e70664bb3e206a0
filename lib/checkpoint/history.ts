import "server-only";
import { INTERRUPT, WRITES_IDX_MAP } from "@langchain/langgraph-checkpoint";
import { and, eq } from "drizzle-orm";
import { checkpoints, checkpointWrites, qualifiedName } from "@/lib/db/schema";
import type { SqlClient } from "@/lib/db/sql-client";
import type { Queryable } from "@/lib/db/tx";

const CP = qualifiedName(checkpoints);
const WR = qualifiedName(checkpointWrites);

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
  /**
   * For a checkpoint made by running tasks (`source` "loop"): the nodes whose writes, stored on the parent, produced
   * it, in task path order. Empty for "input", "update" and "fork" checkpoints: nothing that ran from the parent made
   * them (the parent's writes belong to a sibling).
   */
  writtenBy: string[];
  /** Tasks that raised interrupts from this checkpoint (one interrupt write per task). */
  interruptCount: number;
  /**
   * The thread waits for a human here: a task raised an interrupt from this checkpoint and has not finished (no
   * regular write of its own: unanswered, or answered with something it did not accept and asked again), and no
   * child checkpoint moved past it. While a resume is executing this still reads true until the node finishes.
   */
  pendingInterrupts: boolean;
  /** Number of checkpoints whose parent is this one (more than one: branches start here). */
  childCount: number;
  /** Retention deleted the steps before this checkpoint: it is a root only because its ancestors are gone. */
  truncated: boolean;
  /** Written by a run that newer input rolled back (double texting, `rollback`): a line nothing continues. */
  abandoned: boolean;
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
  parent_write_task_paths: string[] | null;
  interrupt_count: number;
  child_count: number;
  truncated: boolean;
  abandoned: boolean;
}

/** Channels of LangGraph's special writes (errors, interrupts, resume values, scheduling): not task output. */
const SPECIAL_CHANNELS = Object.keys(WRITES_IDX_MAP);
const SPECIAL_LIST = SPECIAL_CHANNELS.map((c) => `'${c}'`).join(", ");

/*
 * Reads only the checkpoint row's metadata columns, the keys of its writes, the task paths of its parent's regular
 * writes (who produced it) and a count of its children: no blob is read and no value deserialized. The child count
 * uses the (thread, ns, parent) index, the parent's writes the primary key of the writes table.
 */
/** The task path of a task pushed by `Send` (a `createAgent` tool call): its path names no node. */
export const PUSH_PREFIX = "~__pregel_push, ";
/** A pushed task the history names by the tool it ran: `~tool, <name>` (see `nodeFromTaskPath`). */
const TOOL_PREFIX = "~tool, ";

/**
 * The tool a pushed task ran (a `createAgent` runs each tool call as a task pushed by `Send`, whose path names no
 * node): the `name` of the ToolMessage it wrote to `messages`, read from that write's JSON, for every row of the task.
 * Only the first match is taken, and an escaped quote never matches, so a tool's output that mentions "name" is not read
 * as the tool's name. A sealed write carries the name in its type (`sealed:json;tool=<name>`, lib/db/vault.ts).
 */
const TOOL_OF_TASK = (
  t: string,
) => `max(CASE WHEN ${t}.task_path LIKE '${PUSH_PREFIX}%' AND ${t}.channel = 'messages'
    THEN CASE WHEN ${t}.type = 'json'
      THEN substring(convert_from(${t}.blob, 'UTF8') from '"name":"([A-Za-z0-9_.:-]{1,128})"')
      ELSE substring(${t}.type from ';tool=([A-Za-z0-9_.:-]{1,128})$') END END)
    OVER (PARTITION BY ${t}.task_id)`;
/** A write's task path, or the tool its pushed task ran. */
const LABEL = (t: string) =>
  `CASE WHEN ${t}.tool IS NOT NULL THEN '${TOOL_PREFIX}' || ${t}.tool ELSE ${t}.task_path END`;

const HISTORY_SQL = `SELECT cp.checkpoint_id, cp.parent_checkpoint_id, cp.checkpoint_ns,
  (cp.metadata ->> 'step')::int AS step, cp.metadata ->> 'source' AS source, cp.checkpoint ->> 'ts' AS ts,
  coalesce(cp.metadata ->> 'truncated' = 'true', false) AS truncated, cp.metadata ? 'abandoned' AS abandoned,
  w.task_ids AS write_task_ids, w.task_paths AS write_task_paths, w.channels AS write_channels,
  pw.task_paths AS parent_write_task_paths, coalesce(w.interrupt_count, 0)::int AS interrupt_count,
  (SELECT count(*) FROM ${CP} c
    WHERE c.thread_id = cp.thread_id AND c.checkpoint_ns = cp.checkpoint_ns
      AND c.parent_checkpoint_id = cp.checkpoint_id)::int AS child_count
FROM (
  SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata FROM ${CP}
  WHERE thread_id = $1 AND checkpoint_ns = $2 AND ($3::text IS NULL OR checkpoint_id < $3::text)
  ORDER BY checkpoint_id DESC LIMIT $4
) cp
LEFT JOIN LATERAL (
  SELECT array_agg(x.task_id ORDER BY x.task_path, x.task_id, x.idx) AS task_ids,
    array_agg(${LABEL("x")} ORDER BY x.task_path, x.task_id, x.idx) AS task_paths,
    array_agg(x.channel ORDER BY x.task_path, x.task_id, x.idx) AS channels,
    count(*) FILTER (WHERE x.channel = '${INTERRUPT}') AS interrupt_count
  FROM (SELECT x.*, ${TOOL_OF_TASK("x")} AS tool FROM ${WR} x
    WHERE x.thread_id = cp.thread_id AND x.checkpoint_ns = cp.checkpoint_ns AND x.checkpoint_id = cp.checkpoint_id) x
) w ON true
LEFT JOIN LATERAL (
  SELECT array_agg(DISTINCT ${LABEL("y")} ORDER BY ${LABEL("y")}) AS task_paths
  FROM (SELECT y.*, ${TOOL_OF_TASK("y")} AS tool FROM ${WR} y
    WHERE cp.parent_checkpoint_id IS NOT NULL AND y.thread_id = cp.thread_id AND y.checkpoint_ns = cp.checkpoint_ns
      AND y.checkpoint_id = cp.parent_checkpoint_id) y
  WHERE y.channel NOT IN (${SPECIAL_LIST})
) pw ON true
ORDER BY cp.checkpoint_id DESC`;

const PULL_PREFIX = "~__pregel_pull, ";
/** Path of the pseudo-task `updateState` runs its update as (`[INTERRUPT, i]`): not a node that ran. */
const UPDATE_PREFIX = `~${INTERRUPT}, `;

/**
 * The node a task path names: `"~__pregel_pull, check_policy"` → `"check_policy"`. Null for writes that no node
 * made: the empty path (the caller's input, Command resume/update values) and `updateState`'s pseudo-task. A pushed
 * task that ran a tool (`~tool, <name>`, from the history's own query) is named by its tool. Other paths (pushed
 * tasks whose node is not part of the path) come back as they are.
 */
export function nodeFromTaskPath(taskPath: string): string | null {
  if (taskPath === "" || taskPath.startsWith(UPDATE_PREFIX)) return null;
  if (taskPath.startsWith(TOOL_PREFIX)) return taskPath.slice(TOOL_PREFIX.length);
  return taskPath.startsWith(PULL_PREFIX) ? taskPath.slice(PULL_PREFIX.length) : taskPath;
}

/** Tasks that raised an interrupt and wrote nothing regular: they have not finished. */
function hasUnfinishedInterrupt(taskIds: string[], channels: (string | undefined)[]): boolean {
  const interrupted = new Set<string>();
  const finished = new Set<string>();
  taskIds.forEach((taskId, i) => {
    const channel = channels[i] ?? "";
    if (channel === INTERRUPT) interrupted.add(taskId);
    else if (!SPECIAL_CHANNELS.includes(channel)) finished.add(taskId);
  });
  return [...interrupted].some((taskId) => !finished.has(taskId));
}

/**
 * A page of a thread's checkpoints, newest first, for the history viewer. `before` is the cursor of the previous
 * page. One statement; cost does not grow with the size of the state.
 */
export async function listCheckpointHistory({
  sql,
  threadId,
  checkpointNs = "",
  before = null,
  limit: requested = 50,
}: {
  sql: SqlClient;
  threadId: string;
  checkpointNs?: string;
  before?: string | null;
  limit?: number;
}): Promise<HistoryPage> {
  const limit = Math.min(Math.max(requested, 1), 500);
  const rows = await sql.query<HistoryRow>(
    HISTORY_SQL,
    [threadId, checkpointNs, before, limit + 1],
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
        writes: taskIds.map((taskId, i) => {
          const path = row.write_task_paths?.[i] ?? "";
          return { node: nodeFromTaskPath(path) ?? path, taskId, channel: row.write_channels?.[i] ?? "" };
        }),
        writtenBy:
          row.source === "loop"
            ? (row.parent_write_task_paths ?? []).flatMap((path) => nodeFromTaskPath(path) ?? [])
            : [],
        interruptCount: row.interrupt_count,
        pendingInterrupts:
          row.interrupt_count > 0 &&
          row.child_count === 0 &&
          hasUnfinishedInterrupt(taskIds, row.write_channels ?? []),
        childCount: row.child_count,
        truncated: row.truncated,
        abandoned: row.abandoned === true,
      };
    }),
    nextCursor: rows.length > limit ? (page[page.length - 1]?.checkpoint_id ?? null) : null,
  };
}

/** A checkpoint and its parent: the edges of a thread's checkpoint tree. */
export interface CheckpointLink {
  checkpointId: string;
  parentCheckpointId: string | null;
}

const LINKS_SQL = `SELECT checkpoint_id, parent_checkpoint_id FROM ${CP}
WHERE thread_id = $1 AND checkpoint_ns = $2 ORDER BY checkpoint_id DESC`;

/**
 * Every (checkpoint, parent) pair of a thread in one namespace, newest first: two short key columns per checkpoint,
 * read along the primary key — no value, metadata or blob. Enough to tell the branches of the whole tree apart.
 */
export async function listCheckpointLinks({
  sql,
  threadId,
  checkpointNs = "",
}: {
  sql: SqlClient;
  threadId: string;
  checkpointNs?: string;
}): Promise<CheckpointLink[]> {
  const rows = await sql.query<{ checkpoint_id: string; parent_checkpoint_id: string | null }>(
    LINKS_SQL,
    [threadId, checkpointNs],
    "cp_links",
  );
  return rows.map((r) => ({ checkpointId: r.checkpoint_id, parentCheckpointId: r.parent_checkpoint_id }));
}

/** One checkpoint of one thread (root namespace). */
export interface CheckpointRef {
  threadId: string;
  checkpointId: string;
}

/** Whether a root-namespace checkpoint of this thread exists. */
export async function checkpointExists({
  db,
  threadId,
  checkpointId,
}: CheckpointRef & { db: Queryable }): Promise<boolean> {
  const [row] = await db
    .select({ id: checkpoints.checkpointId })
    .from(checkpoints)
    .where(
      and(
        eq(checkpoints.threadId, threadId),
        eq(checkpoints.checkpointNs, ""),
        eq(checkpoints.checkpointId, checkpointId),
      ),
    );
  return row !== undefined;
}
