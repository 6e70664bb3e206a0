import "server-only";
import type { Checkpoint } from "@langchain/langgraph-checkpoint";
import { DrizzleCheckpointSaver } from "@/lib/checkpoint/saver";
import { AppError, appErrorOf, errorCodeOf } from "@/lib/contract/errors";
import type { Principal } from "@/lib/contract/roles";
import type { AppDb, Database } from "@/lib/db/client";
import { recordAudit } from "@/lib/db/queries/audit";
import { listPendingDecisions } from "@/lib/db/queries/decisions";
import { getThread, listThreadsToMigrate, markNeedsAttention } from "@/lib/db/queries/threads";
import type { Thread } from "@/lib/db/schema";
import { logger } from "@/lib/platform/observability/logger";
import type { AgentDefinition, AgentMigration } from "../agents/registry";
import { getAgent, getAgentGraph, hasAgent, listAgents } from "../agents/registry";
import { startBranch } from "./branch";
import { activeRuns } from "./executor";

/*
 * Migrations: a newer version of an agent may declare how a thread paused under an older version moves onto it. The
 * move is a branch like a fork — claimed as a run (so it happens once, whichever instance gets there first), written
 * as its own checkpoint with `source: "migration"`, audited (`thread_migrated`) — after which the new graph runs from
 * there and asks its question again under its own interrupt id; the old pending decisions are superseded when that
 * run pauses. Threads a migration does not apply to stay pinned to their version.
 */

const MIGRATION: Principal = {
  kind: "system",
  id: "system:migration",
  label: "version migration",
  role: null,
};

/** Statuses a migration moves a thread from: paused for a person, or waiting for a supervisor. */
const MOVABLE: readonly string[] = ["interrupted", "needs_attention"];

/** The current version of a thread's agent and its declared migration from the thread's version, if any. */
export function declaredMigration(
  thread: Pick<Thread, "agentId" | "agentVersion">,
): { agent: AgentDefinition; migration: AgentMigration } | null {
  if (!hasAgent(thread.agentId)) return null;
  const agent = getAgent(thread.agentId);
  if (agent.version === thread.agentVersion) return null;
  const migration = agent.migrations?.find((m) => m.from === thread.agentVersion);
  return migration ? { agent, migration } : null;
}

/**
 * The nodes a checkpoint has triggered and not yet run — where a paused thread waits — read from the checkpoint
 * itself (a `branch:to:<node>` channel that holds a value — running the node consumes it — newer than what the node
 * has seen), so it works when the version that wrote it is no longer deployed.
 */
export function pendingNodesOf(
  checkpoint: Pick<Checkpoint, "channel_values" | "channel_versions" | "versions_seen">,
): string[] {
  const prefix = "branch:to:";
  const nodes: string[] = [];
  for (const [channel, version] of Object.entries(checkpoint.channel_versions)) {
    if (!channel.startsWith(prefix) || !(channel in checkpoint.channel_values)) continue;
    const node = channel.slice(prefix.length);
    const seen = checkpoint.versions_seen[node]?.[channel];
    if (seen === undefined || newer(version, seen)) nodes.push(node);
  }
  return nodes.sort();
}

function newer(a: string | number, b: string | number): boolean {
  return typeof a === "number" && typeof b === "number" ? a > b : String(a) > String(b);
}

/** State channels (not LangGraph's own: `branch:to:…`, `__start__`, …) of a checkpoint. */
export function stateValues(checkpoint: Checkpoint): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(checkpoint.channel_values).filter(([key]) => !key.includes(":") && !key.startsWith("__")),
  );
}

export type MigrationOutcome =
  | { status: "started"; runId: string; from: string; to: string }
  | { status: "not_applicable"; reason: string };

/**
 * Move one paused thread onto its agent's current version if that version declares a migration for it. Refused
 * (`conflict:run_active`, `conflict:thread_moved` — with `movedTo` when another instance migrated it first) when
 * something else runs or the thread moved on meanwhile; a
 * migration function that throws is reported as 409 `conflict:graph_version` and the thread waits for a supervisor.
 */
export async function migrateThread({
  database,
  threadId,
}: {
  /** The whole handle: the saver reads the head through its SQL client, and the migration's run executes. */
  database: Database;
  threadId: string;
}): Promise<MigrationOutcome> {
  const { db, sql } = database;
  const thread = await getThread({ db, threadId });
  if (!thread) throw new AppError("not_found:thread", `Thread ${threadId} does not exist.`);
  const declared = declaredMigration(thread);
  if (!declared) return { status: "not_applicable", reason: "no migration is declared from its version" };
  if (!MOVABLE.includes(thread.status)) {
    return { status: "not_applicable", reason: `the thread is ${thread.status}, not paused` };
  }
  const { agent, migration } = declared;
  const tuple = await new DrizzleCheckpointSaver(sql).getTuple({
    configurable: { thread_id: threadId, checkpoint_ns: "" },
  });
  if (!tuple) return { status: "not_applicable", reason: "the thread has no checkpoint" };
  const head = tuple.config.configurable?.checkpoint_id as string;
  const pendingNodes = pendingNodesOf(tuple.checkpoint);
  let moved: ReturnType<AgentMigration["migrate"]>;
  try {
    moved = migration.migrate({ values: stateValues(tuple.checkpoint), pendingNodes });
  } catch (error) {
    throw new AppError(
      "conflict:graph_version",
      `The migration of ${thread.agentId} from version ${thread.agentVersion} to ${agent.version} failed: ${error instanceof Error ? error.message : String(error)}`.slice(
        0,
        500,
      ),
      {
        agent: thread.agentId,
        threadVersion: thread.agentVersion,
        currentVersion: agent.version,
        newer: false,
      },
    );
  }
  if (!moved) {
    return {
      status: "not_applicable",
      reason: `the migration does not move threads paused at ${pendingNodes.join(", ")}`,
    };
  }
  const from = thread.agentVersion;
  const result = await startBranch({
    database,
    agent,
    graph: await getAgentGraph(agent),
    threadId,
    by: MIGRATION,
    checkpointId: head,
    kind: "migration",
    values: moved.values,
    asNode: moved.asNode,
    editedBy: null,
    audit: () => ({
      action: "thread_migrated",
      detail: {
        from,
        to: agent.version,
        description: migration.description,
        pendingNodes,
        asNode: moved.asNode,
        fields: Object.keys(moved.values).sort(),
      },
    }),
    // Under the thread's lock: still paused at the checkpoint read above, on the version migrated from.
    precondition: async (locked, tx) => {
      if (locked.agentVersion !== from) {
        throw new AppError("conflict:thread_moved", "The thread was moved to another version meanwhile.", {
          movedTo: locked.agentVersion,
        });
      }
      const open = await listPendingDecisions({ db: tx, threadId });
      const still =
        locked.agentVersion === from &&
        MOVABLE.includes(locked.status) &&
        open.length > 0 &&
        open.every((d) => d.checkpointId === head);
      if (!still)
        throw new AppError("conflict:thread_moved", "The thread moved on before it could be migrated.");
    },
    warn: false,
  });
  return { status: "started", runId: result.runId, from, to: agent.version };
}

/** Not-applicable verdicts, by thread, for the head they were given at (a thread that moves on is looked at again). */
const skipped = new Map<string, string>();

/** A migration that threw: the thread waits for a supervisor, and the audit trail says why. */
export async function migrationFailed({
  db,
  threadId,
  error,
}: {
  db: AppDb;
  threadId: string;
  error: AppError;
}): Promise<void> {
  logger().error(
    { threadId, code: error.code, reason: error.message },
    "migration: failed; the thread waits for a supervisor",
  );
  await db.transaction(async (tx) => {
    await markNeedsAttention({ db: tx, threadId });
    await recordAudit({
      db: tx,
      entries: [
        {
          action: "migration_failed",
          actor: MIGRATION,
          threadId,
          detail: { message: error.message, ...error.details },
        },
      ],
    });
  });
}

function remember(threadId: string, checkpointId: string): void {
  if (skipped.size > 10_000) skipped.clear();
  skipped.set(threadId, checkpointId);
}

/** Migration runs this process started that may still execute (a deploy onto 10,000 paused threads moves them a few at a time). */
const inFlight = new Set<string>();
const MAX_IN_FLIGHT = 8;

/**
 * Start the migrations due: every paused thread whose agent's current version declares a migration from the
 * thread's version, at most {@link MAX_IN_FLIGHT} executing at once on this process (the sweeper calls this on every
 * pass, so the rest follow). Threads the migration does not apply to are remembered at their head and skipped.
 * Returns the runs started.
 */
export async function migratePausedThreads({
  database,
  page = 200,
}: {
  database: Database;
  page?: number;
}): Promise<number> {
  const { db } = database;
  const running = activeRuns();
  for (const id of inFlight) if (!running.has(id)) inFlight.delete(id);
  let started = 0;
  for (const agent of listAgents()) {
    const versions = (agent.migrations ?? []).map((m) => m.from);
    let after: string | undefined;
    for (;;) {
      if (inFlight.size >= MAX_IN_FLIGHT) return started;
      const due = await listThreadsToMigrate({ db, agentId: agent.id, versions, after, limit: page });
      if (due.length === 0) break;
      after = due.at(-1)?.threadId;
      for (const { threadId, checkpointId } of due) {
        if (inFlight.size >= MAX_IN_FLIGHT) return started;
        if (skipped.get(threadId) === checkpointId) continue;
        try {
          const outcome = await migrateThread({ database, threadId });
          if (outcome.status === "started") {
            started += 1;
            inFlight.add(outcome.runId);
          } else remember(threadId, checkpointId);
        } catch (error) {
          const known = appErrorOf(error);
          if (known?.code === "conflict:graph_version") {
            // The migration itself failed: the thread waits for a supervisor, and is not retried on every pass.
            remember(threadId, checkpointId);
            await migrationFailed({ db, threadId, error: known });
          } else if (!errorCodeOf(error)?.startsWith("conflict:")) {
            throw error;
          }
        }
      }
      if (due.length < page) break;
    }
  }
  return started;
}
