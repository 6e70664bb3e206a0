import "server-only";
import { type SQL, sql } from "drizzle-orm";
import { checkpointBlobs, checkpoints, checkpointWrites } from "@/lib/db/schema";
import type { Queryable } from "@/lib/db/tx";

/*
 * The checkpoint SQL of retention (the rules are in lib/runtime/retention/retention.ts, which decides which threads may be
 * pruned and locks them): find threads with prunable checkpoints, and prune one thread's root namespace.
 */

function rowsOf<T>(result: unknown): T[] {
  return (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as T[];
}

/**
 * The next `limit` distinct thread ids that have checkpoints, after `after` (byte order): a loose index scan of the
 * checkpoints primary key, one index probe per thread instead of reading every checkpoint row.
 */
export async function listCheckpointThreadIds({
  db,
  after,
  limit,
}: {
  db: Queryable;
  after: string;
  limit: number;
}): Promise<string[]> {
  const rows = rowsOf<{ id: string }>(
    await db.execute(sql`WITH RECURSIVE ids(id, n) AS (
      SELECT (SELECT thread_id FROM ${checkpoints} WHERE thread_id > ${after} ORDER BY thread_id LIMIT 1), 1
      UNION ALL
      SELECT (SELECT c.thread_id FROM ${checkpoints} c WHERE c.thread_id > ids.id ORDER BY c.thread_id LIMIT 1), n + 1
      FROM ids WHERE ids.id IS NOT NULL AND n < ${limit}
    )
    SELECT id FROM ids WHERE id IS NOT NULL`),
  );
  return rows.map((r) => r.id);
}

/**
 * Of `threadIds`, those with something to prune. A thread has something to prune exactly when it has a root
 * checkpoint without children (a branch tip) that is older than the cutoff and not among its latest `keepLatest`:
 * everything under a deleted checkpoint is deleted too, so a deletion always includes such a tip. The LATERAL
 * subqueries (with LIMIT) keep every lookup inside one thread's index range: as a plain EXISTS the planner may answer
 * the whole batch with one anti-join over the entire checkpoints table.
 */
export async function findPrunableThreads({
  db,
  threadIds,
  keepLatest,
  cutoff,
}: {
  db: Queryable;
  threadIds: string[];
  keepLatest: number;
  cutoff: string;
}): Promise<string[]> {
  if (threadIds.length === 0) return [];
  const rows = rowsOf<{ id: string }>(
    await db.execute(sql`SELECT t.id FROM unnest(${sql.param(threadIds)}::text[]) AS t(id)
    CROSS JOIN LATERAL (
      SELECT checkpoint_id FROM ${checkpoints} WHERE thread_id = t.id AND checkpoint_ns = ''
      ORDER BY checkpoint_id DESC OFFSET ${keepLatest - 1} LIMIT 1
    ) nth
    CROSS JOIN LATERAL (
      SELECT 1 FROM ${checkpoints} c
      WHERE c.thread_id = t.id AND c.checkpoint_ns = '' AND c.checkpoint_id < nth.checkpoint_id
        AND c.created_at <= ${cutoff}::timestamptz
        AND NOT EXISTS (SELECT 1 FROM ${checkpoints} ch WHERE ch.thread_id = t.id AND ch.checkpoint_ns = ''
          AND ch.parent_checkpoint_id = c.checkpoint_id)
      LIMIT 1
    ) tip`),
  );
  return rows.map((r) => r.id);
}

/** The statement that prunes one thread (or, `dryRun`, counts what it would prune). See the rules above. */
function pruneThreadSql(threadId: string, keepLatest: number, cutoff: string, dryRun: boolean): SQL {
  // The thread's root-namespace rows of the table aliased `alias`.
  const root = (alias: string) => {
    const t = sql.identifier(alias);
    return sql`${t}.thread_id = ${threadId} AND ${t}.checkpoint_ns = ''`;
  };
  const plan = sql`WITH RECURSIVE seed AS (
    (SELECT c.checkpoint_id FROM ${checkpoints} c WHERE ${root("c")} ORDER BY c.checkpoint_id DESC LIMIT ${keepLatest})
    UNION
    SELECT c.checkpoint_id FROM ${checkpoints} c WHERE ${root("c")} AND c.created_at > ${cutoff}::timestamptz
  ), kept AS (
    SELECT c.checkpoint_id, c.parent_checkpoint_id FROM ${checkpoints} c
    WHERE ${root("c")} AND c.checkpoint_id IN (SELECT checkpoint_id FROM seed)
    UNION
    -- One primary-key probe per ancestor (the LIMIT stops the planner from hashing the whole thread at every level).
    SELECT p.checkpoint_id, p.parent_checkpoint_id FROM kept k
    CROSS JOIN LATERAL (
      SELECT p.checkpoint_id, p.parent_checkpoint_id FROM ${checkpoints} p
      WHERE ${root("p")} AND p.checkpoint_id = k.parent_checkpoint_id LIMIT 1
    ) p
  ), doomed AS (
    SELECT c.checkpoint_id FROM ${checkpoints} c
    WHERE ${root("c")} AND NOT EXISTS (SELECT 1 FROM kept k WHERE k.checkpoint_id = c.checkpoint_id)
  ), live AS (
    SELECT DISTINCT v.channel, v.version FROM kept k
    JOIN ${checkpoints} c ON ${root("c")} AND c.checkpoint_id = k.checkpoint_id
    CROSS JOIN LATERAL jsonb_each_text(c.checkpoint -> 'channel_versions') AS v(channel, version)
  ), gone_blobs AS (
    SELECT b.channel, b.version FROM ${checkpointBlobs} b
    WHERE ${root("b")} AND EXISTS (SELECT 1 FROM doomed)
      AND NOT EXISTS (SELECT 1 FROM live l
        WHERE b.channel = l.channel COLLATE "C" AND b.version = l.version COLLATE "C")
  )`;
  return removeDoomed(plan, root, dryRun, false);
}

/** Prune one thread's root namespace (or, `dryRun`, count what would go): rows and bytes deleted. */
export async function pruneThreadRows({
  db,
  threadId,
  keepLatest,
  cutoff,
  dryRun,
}: {
  db: Queryable;
  threadId: string;
  keepLatest: number;
  cutoff: string;
  dryRun: boolean;
}): Promise<{ checkpoints: number; writes: number; blobs: number; bytes: number }> {
  const [row] = rowsOf<{ checkpoints: number; writes: number; blobs: number; bytes: string }>(
    await db.execute(pruneThreadSql(threadId, keepLatest, cutoff, dryRun)),
  );
  return {
    checkpoints: row?.checkpoints ?? 0,
    writes: row?.writes ?? 0,
    blobs: row?.blobs ?? 0,
    bytes: Number(row?.bytes ?? 0),
  };
}

/** The cutoff instant `olderThanMs` ago by the database clock (the clock that stamped created_at), ISO µs. */
export async function readCutoff({
  db,
  olderThanMs,
}: {
  db: Queryable;
  olderThanMs: number;
}): Promise<string> {
  const [row] = rowsOf<{ cutoff: string }>(
    await db.execute(sql`SELECT to_char((now() - make_interval(secs => ${olderThanMs / 1000})) AT TIME ZONE 'UTC',
      'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cutoff`),
  );
  if (!row?.cutoff) throw new Error("pruneCheckpoints: could not read the database clock");
  return row.cutoff;
}

/** Size of the three checkpoint tables with their indexes, in bytes. */
export async function checkpointTablesSize({ db }: { db: Queryable }): Promise<number> {
  const [size] = rowsOf<{ bytes: string }>(
    await db.execute(sql`SELECT (pg_total_relation_size('checkpoint.checkpoints') + pg_total_relation_size('checkpoint.checkpoint_blobs')
      + pg_total_relation_size('checkpoint.checkpoint_writes'))::text AS bytes`),
  );
  return Number(size?.bytes ?? 0);
}

/**
 * The statement that truncates one finished thread's history (or, `dryRun`, counts what it would delete): keep the
 * head (the latest root checkpoint) and its `keepLast - 1` nearest ancestors, plus every branch tip younger than the
 * cutoff with all of its ancestors (a fork someone may still look at or continue is never cut); delete the rest with
 * their pending writes and the blobs no kept checkpoint refers to. Each kept checkpoint whose parent goes becomes a
 * root: `parent_checkpoint_id` NULL and `metadata.truncated = true` (the history shows "earlier steps pruned").
 */
function truncateThreadSql(threadId: string, keepLast: number, cutoff: string, dryRun: boolean): SQL {
  const root = (alias: string) => {
    const t = sql.identifier(alias);
    return sql`${t}.thread_id = ${threadId} AND ${t}.checkpoint_ns = ''`;
  };
  const plan = sql`WITH RECURSIVE head AS (
    SELECT c.checkpoint_id, c.parent_checkpoint_id, 1 AS depth FROM ${checkpoints} c WHERE ${root("c")}
    ORDER BY c.checkpoint_id DESC LIMIT 1
  ), head_chain AS (
    SELECT checkpoint_id, parent_checkpoint_id, depth FROM head
    UNION ALL
    SELECT p.checkpoint_id, p.parent_checkpoint_id, h.depth + 1 FROM head_chain h
    CROSS JOIN LATERAL (
      SELECT p.checkpoint_id, p.parent_checkpoint_id FROM ${checkpoints} p
      WHERE ${root("p")} AND p.checkpoint_id = h.parent_checkpoint_id LIMIT 1
    ) p
    WHERE h.depth < ${keepLast}
  ), young_tips AS (
    SELECT c.checkpoint_id, c.parent_checkpoint_id FROM ${checkpoints} c
    WHERE ${root("c")} AND c.created_at > ${cutoff}::timestamptz
      AND NOT EXISTS (SELECT 1 FROM ${checkpoints} ch WHERE ${root("ch")} AND ch.parent_checkpoint_id = c.checkpoint_id)
      AND NOT EXISTS (SELECT 1 FROM head h WHERE h.checkpoint_id = c.checkpoint_id)
  ), fork_chains AS (
    SELECT checkpoint_id, parent_checkpoint_id FROM young_tips
    UNION
    SELECT p.checkpoint_id, p.parent_checkpoint_id FROM fork_chains f
    CROSS JOIN LATERAL (
      SELECT p.checkpoint_id, p.parent_checkpoint_id FROM ${checkpoints} p
      WHERE ${root("p")} AND p.checkpoint_id = f.parent_checkpoint_id LIMIT 1
    ) p
  ), kept AS (
    SELECT checkpoint_id, parent_checkpoint_id FROM head_chain
    UNION
    SELECT checkpoint_id, parent_checkpoint_id FROM fork_chains
  ), doomed AS (
    SELECT c.checkpoint_id FROM ${checkpoints} c
    WHERE ${root("c")} AND NOT EXISTS (SELECT 1 FROM kept k WHERE k.checkpoint_id = c.checkpoint_id)
  ), new_roots AS (
    SELECT k.checkpoint_id FROM kept k
    WHERE k.parent_checkpoint_id IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM kept p WHERE p.checkpoint_id = k.parent_checkpoint_id)
  ), live AS (
    SELECT DISTINCT v.channel, v.version FROM kept k
    JOIN ${checkpoints} c ON ${root("c")} AND c.checkpoint_id = k.checkpoint_id
    CROSS JOIN LATERAL jsonb_each_text(c.checkpoint -> 'channel_versions') AS v(channel, version)
  ), gone_blobs AS (
    SELECT b.channel, b.version FROM ${checkpointBlobs} b
    WHERE ${root("b")} AND EXISTS (SELECT 1 FROM doomed)
      AND NOT EXISTS (SELECT 1 FROM live l
        WHERE b.channel = l.channel COLLATE "C" AND b.version = l.version COLLATE "C")
  )`;
  return removeDoomed(plan, root, dryRun, true);
}

/**
 * Truncate one finished thread's root namespace to the last `keepLast` checkpoints of its head chain, keeping every
 * branch younger than `cutoff` whole (or, `dryRun`, count what would go). See {@link truncateThreadSql}.
 */
export async function truncateThreadRows({
  db,
  threadId,
  keepLast,
  cutoff,
  dryRun,
}: {
  db: Queryable;
  threadId: string;
  keepLast: number;
  cutoff: string;
  dryRun: boolean;
}): Promise<{ checkpoints: number; writes: number; blobs: number; roots: number; bytes: number }> {
  const [row] = rowsOf<{ checkpoints: number; writes: number; blobs: number; roots: number; bytes: string }>(
    await db.execute(truncateThreadSql(threadId, keepLast, cutoff, dryRun)),
  );
  return {
    checkpoints: row?.checkpoints ?? 0,
    writes: row?.writes ?? 0,
    blobs: row?.blobs ?? 0,
    roots: row?.roots ?? 0,
    bytes: Number(row?.bytes ?? 0),
  };
}

/**
 * The end of a prune or truncate statement, after `plan` defined `doomed` (checkpoints to delete) and `gone_blobs`
 * (and, with `roots`, `new_roots`: kept checkpoints whose parent goes): count what would go (`dryRun`), or delete it
 * — writes, blobs, checkpoints — and mark the new roots `truncated`. Rows and bytes either way.
 */
function removeDoomed(plan: SQL, root: (alias: string) => SQL, dryRun: boolean, roots: boolean): SQL {
  if (dryRun) {
    return sql`${plan}
    SELECT (SELECT count(*) FROM doomed)::int AS checkpoints,
      (SELECT count(*) FROM ${checkpointWrites} w JOIN doomed d ON ${root("w")} AND w.checkpoint_id = d.checkpoint_id)::int
        AS writes,
      (SELECT count(*) FROM gone_blobs)::int AS blobs${roots ? sql`, (SELECT count(*) FROM new_roots)::int AS roots` : sql``},
      ((SELECT coalesce(sum(pg_column_size(c.checkpoint) + pg_column_size(c.metadata)), 0) FROM ${checkpoints} c
          JOIN doomed d ON ${root("c")} AND c.checkpoint_id = d.checkpoint_id)
        + (SELECT coalesce(sum(octet_length(w.blob)), 0) FROM ${checkpointWrites} w
          JOIN doomed d ON ${root("w")} AND w.checkpoint_id = d.checkpoint_id)
        + (SELECT coalesce(sum(octet_length(b.blob)), 0) FROM ${checkpointBlobs} b
          JOIN gone_blobs g ON ${root("b")} AND b.channel = g.channel AND b.version = g.version))::text AS bytes`;
  }
  const rooted = roots
    ? sql`, rooted AS (
    UPDATE ${checkpoints} c SET parent_checkpoint_id = NULL, metadata = c.metadata || '{"truncated": true}'::jsonb
    FROM new_roots r WHERE ${root("c")} AND c.checkpoint_id = r.checkpoint_id
    RETURNING 1
  )`
    : sql``;
  return sql`${plan}, del_writes AS (
    DELETE FROM ${checkpointWrites} w USING doomed d WHERE ${root("w")} AND w.checkpoint_id = d.checkpoint_id
    RETURNING octet_length(w.blob) AS bytes
  ), del_blobs AS (
    DELETE FROM ${checkpointBlobs} b USING gone_blobs g
    WHERE ${root("b")} AND b.channel = g.channel AND b.version = g.version
    RETURNING coalesce(octet_length(b.blob), 0) AS bytes
  ), del_checkpoints AS (
    DELETE FROM ${checkpoints} c USING doomed d WHERE ${root("c")} AND c.checkpoint_id = d.checkpoint_id
    RETURNING pg_column_size(c.checkpoint) + pg_column_size(c.metadata) AS bytes
  )${rooted}
  SELECT (SELECT count(*) FROM del_checkpoints)::int AS checkpoints, (SELECT count(*) FROM del_writes)::int AS writes,
    (SELECT count(*) FROM del_blobs)::int AS blobs${roots ? sql`, (SELECT count(*) FROM rooted)::int AS roots` : sql``},
    ((SELECT coalesce(sum(bytes), 0) FROM del_checkpoints) + (SELECT coalesce(sum(bytes), 0) FROM del_writes)
      + (SELECT coalesce(sum(bytes), 0) FROM del_blobs))::text AS bytes`;
}
