import "server-only";
import { z } from "zod";
import { type CheckpointLink, listCheckpointHistory, listCheckpointLinks } from "@/lib/checkpoint/history";
import { AppError } from "@/lib/contract/errors";
import { limitParam } from "@/lib/contract/params";
import type {
  BranchSummary,
  HistoryCheckpoint,
  ThreadHistoryView,
  WrittenBy,
} from "@/lib/contract/views/history";
import type { AppDb } from "@/lib/db/open";
import { getThread } from "@/lib/db/queries/threads";
import type { Thread } from "@/lib/db/schema";
import type { SqlClient } from "@/lib/db/sql-client";
import { parseWith } from "@/lib/platform/http/http";

/*
 * The history viewer's page of a thread's checkpoint tree, built from metadata only (no channel value is read).
 * Root namespace only: checkpoints of subgraphs live in other namespaces and are out of scope here.
 */

/** The page's shapes are the browser's (lib/contract/views/history.ts). */
export type { BranchSummary, HistoryCheckpoint, ThreadHistoryView, WrittenBy };

export interface HistoryQuery {
  before: string | null;
  limit: number;
}

/** `?before=<checkpointId>&limit=<1..200, default 50>`; other parameters are refused. */
export const historyQuery = z.strictObject({
  before: z
    .string()
    .min(1, "before must be a checkpoint id")
    .max(200, "before is too long")
    .optional()
    .transform((v) => v ?? null),
  limit: limitParam(200, 50),
});

/** The history query of a URL, or `bad_request:history`. */
export function parseHistoryQuery(params: URLSearchParams): HistoryQuery {
  return parseWith(historyQuery, Object.fromEntries(params), "bad_request:history", "The history query");
}

/** Branch labels of a checkpoint tree. */
export interface BranchLabels {
  headCheckpointId: string | null;
  labels: Map<string, string>;
  branches: BranchSummary[];
}

/**
 * Label every checkpoint of a tree given as (id, parent) pairs: the head — the newest checkpoint, where the next run
 * continues — and its ancestors are `main`; then, newest leaf first, each other leaf and its ancestors up to the
 * first already-labelled checkpoint are `branch-1`, `branch-2`, … A checkpoint shared by two side chains belongs to
 * the newer one. Ids compare as the database orders them (byte order; LangGraph's ids are ASCII and time-sortable).
 * A parent missing from the pairs (deleted by retention) ends a chain.
 */
export function labelBranches(links: readonly CheckpointLink[]): BranchLabels {
  const newestFirst = [...links].sort((a, b) =>
    a.checkpointId < b.checkpointId ? 1 : a.checkpointId > b.checkpointId ? -1 : 0,
  );
  const parentOf = new Map(newestFirst.map((l) => [l.checkpointId, l.parentCheckpointId]));
  const hasChildren = new Set(
    newestFirst.flatMap((l) => (l.parentCheckpointId ? [l.parentCheckpointId] : [])),
  );
  const labels = new Map<string, string>();
  const branches: BranchSummary[] = [];

  const claim = (leaf: string, label: string) => {
    let size = 0;
    let id: string | null = leaf;
    let forkedFrom: string | null = null;
    while (id !== null && parentOf.has(id)) {
      if (labels.has(id)) {
        forkedFrom = id;
        break;
      }
      labels.set(id, label);
      size += 1;
      id = parentOf.get(id) ?? null;
    }
    branches.push({ label, leafCheckpointId: leaf, forkedFromCheckpointId: forkedFrom, size });
  };

  const head = newestFirst[0]?.checkpointId ?? null;
  if (head !== null) claim(head, "main");
  // Leaves first, newest first; then anything left over (only a malformed tree — a cycle — has such checkpoints).
  const leaves = newestFirst.filter((l) => !hasChildren.has(l.checkpointId));
  for (const { checkpointId } of [...leaves, ...newestFirst]) {
    if (!labels.has(checkpointId)) claim(checkpointId, `branch-${branches.length}`);
  }
  return { headCheckpointId: head, labels, branches };
}

function writtenBy(source: string | null, nodes: string[]): WrittenBy {
  if (source === "input" || source === "update" || source === "fork" || source === "migration")
    return { kind: source };
  return { kind: "nodes", nodes };
}

/**
 * The thread a history page is about — its title and order number for the header, its pinned agent version for the
 * graph drawn and the fork form — or undefined when there is none.
 */
export async function findHistoryThread({
  db,
  threadId,
}: {
  db: AppDb;
  threadId: string;
}): Promise<Pick<Thread, "title" | "orderRef" | "agentId" | "agentVersion"> | undefined> {
  return getThread({ db, threadId });
}

/** What {@link getThreadHistory} reads from: the app database (thread rows) and the checkpoint tables. */
export interface HistoryDeps {
  db: AppDb;
  sql: SqlClient;
}

/**
 * A page of a thread's checkpoint tree, newest first. Throws `not_found:thread` for an unknown thread and
 * `bad_request:history` when `before` is not a checkpoint of this thread.
 *
 * Branch labels need the whole tree, not just the page: whether a checkpoint is on the head's chain depends on
 * descendants that may be pages away. So the labels come from a second, cheap query of every (id, parent) pair of
 * the thread — two short key columns per checkpoint, no values or blobs — run after the page, so every checkpoint
 * of the page is in it even while a run adds checkpoints.
 */
export async function getThreadHistory(
  { db, sql }: HistoryDeps,
  { threadId, before, limit }: { threadId: string } & HistoryQuery,
): Promise<ThreadHistoryView> {
  const thread = await getThread({ db, threadId });
  if (!thread) throw new AppError("not_found:thread", `Thread ${threadId} does not exist.`);
  const page = await listCheckpointHistory({ sql, threadId, checkpointNs: "", before, limit });
  const links = await listCheckpointLinks({ sql, threadId, checkpointNs: "" });
  const tree = labelBranches(links);
  // Checkpoint ids sort in creation order: number them across the whole tree.
  const numbers = new Map(
    links
      .map((l) => l.checkpointId)
      .sort()
      .map((id, i) => [id, i + 1]),
  );
  if (before !== null && !tree.labels.has(before)) {
    throw new AppError("bad_request:history", `before: ${before} is not a checkpoint of thread ${threadId}.`);
  }
  return {
    threadId,
    status: thread.status,
    headCheckpointId: tree.headCheckpointId,
    branches: tree.branches,
    checkpoints: page.entries.map((e) => ({
      checkpointId: e.checkpointId,
      parentCheckpointId: e.parentCheckpointId,
      step: e.step,
      number: numbers.get(e.checkpointId) ?? 0,
      source: e.source,
      createdAt: e.createdAt,
      writtenBy: writtenBy(e.source, e.writtenBy),
      // Only a checkpoint deleted between the two reads can be missing from the tree.
      branch: tree.labels.get(e.checkpointId) ?? "unknown",
      isHead: e.checkpointId === tree.headCheckpointId,
      pausedForHuman: e.pendingInterrupts,
      interruptCount: e.interruptCount,
      childCount: e.childCount,
      truncated: e.truncated,
      abandoned: e.abandoned,
    })),
    nextCursor: page.nextCursor,
  };
}
