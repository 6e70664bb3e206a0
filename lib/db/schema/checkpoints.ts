import {
  getTableConfig,
  index,
  integer,
  jsonb,
  type PgTable,
  pgSchema,
  primaryKey,
  text,
  timestamp,
} from "drizzle-orm/pg-core";
import { bytea, byteText } from "./columns";

/**
 * The saver's tables live in a Postgres schema of their own, apart from the application's tables in `public`: their
 * size, vacuum and grants are theirs, and a move of checkpoints to a database of their own later is one schema.
 * Migration 0033 moved them there; the previous release's servers, still running during a rolling deploy, reach
 * them through views of the old names in `public` (see that migration).
 */
export const checkpointSchema = pgSchema("checkpoint");

/** A table's schema-qualified name, quoted, for statements written as text (the saver's, retention's). */
export function qualifiedName(table: PgTable): string {
  const { schema, name } = getTableConfig(table);
  return schema ? `"${schema}"."${name}"` : `"${name}"`;
}

/**
 * One row per LangGraph checkpoint. `checkpoint` holds everything but the channel values (ids, versions,
 * versions seen); the values live in `checkpoint_blobs`, addressed by (channel, version).
 *
 * The saver's queries (latest checkpoint, exact checkpoint, newest-first pages) all use the primary key prefix
 * (thread, namespace[, checkpoint id]). One secondary index, `checkpoints_parent_idx`, serves the history page's
 * child count (`listCheckpointHistory`: checkpoints whose parent is this one), which shows where branches start.
 */
export const checkpoints = checkpointSchema.table(
  "checkpoints",
  {
    threadId: byteText("thread_id").notNull(),
    checkpointNs: byteText("checkpoint_ns").notNull().default(""),
    checkpointId: byteText("checkpoint_id").notNull(),
    parentCheckpointId: byteText("parent_checkpoint_id"),
    checkpoint: jsonb("checkpoint").notNull(),
    metadata: jsonb("metadata").notNull().default({}),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.threadId, t.checkpointNs, t.checkpointId] }),
    index("checkpoints_parent_idx").on(t.threadId, t.checkpointNs, t.parentCheckpointId),
  ],
);

/**
 * Channel values by version. Versions are unique per thread (see `getNextVersion`), so two branches forked from one
 * checkpoint never share a (channel, version) key and cannot overwrite each other's values.
 * A channel a checkpoint leaves empty has no row at its version (rows of `type = 'empty'` with a NULL `blob`, written
 * before, read the same).
 */
export const checkpointBlobs = checkpointSchema.table(
  "checkpoint_blobs",
  {
    threadId: byteText("thread_id").notNull(),
    checkpointNs: byteText("checkpoint_ns").notNull().default(""),
    channel: byteText("channel").notNull(),
    version: byteText("version").notNull(),
    type: text("type").notNull(),
    blob: bytea("blob"),
  },
  (t) => [primaryKey({ columns: [t.threadId, t.checkpointNs, t.channel, t.version] })],
);

/**
 * Pending writes of the tasks that ran from a checkpoint. `task_path` is LangGraph's serialized task path; pending
 * writes are returned ordered by (task_path, task_id, idx), all compared by byte order. Special writes (errors,
 * interrupts, resume values) use negative `idx`.
 */
export const checkpointWrites = checkpointSchema.table(
  "checkpoint_writes",
  {
    threadId: byteText("thread_id").notNull(),
    checkpointNs: byteText("checkpoint_ns").notNull().default(""),
    checkpointId: byteText("checkpoint_id").notNull(),
    taskId: byteText("task_id").notNull(),
    idx: integer("idx").notNull(),
    channel: byteText("channel").notNull(),
    type: text("type"),
    blob: bytea("blob").notNull(),
    taskPath: byteText("task_path").notNull().default(""),
  },
  (t) => [primaryKey({ columns: [t.threadId, t.checkpointNs, t.checkpointId, t.taskId, t.idx] })],
);

export type CheckpointRow = typeof checkpoints.$inferSelect;
export type NewCheckpointRow = typeof checkpoints.$inferInsert;
export type CheckpointBlobRow = typeof checkpointBlobs.$inferSelect;
export type CheckpointWriteRow = typeof checkpointWrites.$inferSelect;
