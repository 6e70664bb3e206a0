import "server-only";
import { type BaseMessage, isBaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { StateSnapshot } from "@langchain/langgraph";
import { WRITES_IDX_MAP } from "@langchain/langgraph-checkpoint";
import { create, type Delta } from "jsondiffpatch";
import { jsonSafe, requireId, stateSnapshot, toAguiMessages } from "@/lib/agui";
import { DrizzleCheckpointSaver } from "@/lib/checkpoint/saver";
import { AppError } from "@/lib/contract/errors";
import type {
  ChangedKeys,
  CheckpointInterruptView,
  CheckpointView,
  CheckpointWriteView,
} from "@/lib/contract/views/checkpoint";
import type { AppDb } from "@/lib/db/open";
import { getThread } from "@/lib/db/queries/threads";
import type { SqlClient } from "@/lib/db/sql-client";
import type { AgentDefinition } from "../agents/registry";

/** The view's shapes are the browser's (lib/contract/views/checkpoint.ts). */
export type { ChangedKeys, CheckpointInterruptView, CheckpointView, CheckpointWriteView };

/** What {@link getCheckpointView} reads from: the database, and the thread's agent with its compiled graph. */
export interface CheckpointViewDeps {
  db: AppDb;
  sql: SqlClient;
  graph: { getState(config: RunnableConfig): Promise<StateSnapshot> };
  agent: Pick<AgentDefinition, "interrupts">;
}

const SPECIAL_CHANNELS = new Set(Object.keys(WRITES_IDX_MAP));

/*
 * Arrays are matched by their items' `id` (messages, so an appended message reads as one addition), other items by
 * position. Compared in JSON form, so class instances cannot add noise. No text diffs: a changed string is replaced
 * whole, so a client can read or apply the delta with plain jsondiffpatch (no diff-match-patch).
 */
const differ = create({
  objectHash: (item, index) => {
    const id = (item as { id?: unknown }).id;
    return typeof id === "string" ? `id:${id}` : `index:${index ?? ""}`;
  },
});

/** The JSON form the diff compares: state values with messages in AG-UI form. */
function comparable(values: Record<string, unknown>): Record<string, unknown> {
  const messages = (values.messages as BaseMessage[] | undefined) ?? [];
  return { ...stateSnapshot(values), messages: toAguiMessages(messages) };
}

/** The top-level keys a jsondiffpatch delta of two objects adds, changes and removes (sorted). */
export function changedKeys(delta: Delta | null | undefined): ChangedKeys {
  const result: ChangedKeys = { added: [], changed: [], removed: [] };
  // Only an object's delta has keys: a value replaced whole is an array, an array's delta is marked `_t: "a"`.
  if (!delta || typeof delta !== "object" || Array.isArray(delta) || "_t" in delta) return result;
  for (const [key, entry] of Object.entries(delta).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (Array.isArray(entry) && entry.length === 1) result.added.push(key);
    else if (Array.isArray(entry) && entry.length === 3 && entry[1] === 0 && entry[2] === 0)
      result.removed.push(key);
    else result.changed.push(key);
  }
  return result;
}

function writeValue(value: unknown): unknown {
  if (isBaseMessage(value)) return toAguiMessages([value])[0];
  if (Array.isArray(value) && value.length > 0 && value.every((v) => isBaseMessage(v)))
    return toAguiMessages(value);
  return jsonSafe(value) ?? null;
}

/**
 * One checkpoint of a thread (root namespace) as the time-travel view shows it: its state, what ran from it, the
 * interrupts raised there and a diff against its parent. The checkpoint is read under this thread's key, so another
 * thread's checkpoint is `not_found:checkpoint` here.
 */
export async function getCheckpointView(
  { db, sql, graph, agent }: CheckpointViewDeps,
  { threadId, checkpointId }: { threadId: string; checkpointId: string },
): Promise<CheckpointView> {
  const thread = await getThread({ db, threadId });
  if (!thread) throw new AppError("not_found:thread", `Thread ${threadId} does not exist.`);
  const config = { configurable: { thread_id: threadId, checkpoint_ns: "", checkpoint_id: checkpointId } };
  const tuple = await new DrizzleCheckpointSaver(sql).getTuple(config);
  if (!tuple) {
    throw new AppError(
      "not_found:checkpoint",
      `Checkpoint ${checkpointId} of thread ${threadId} does not exist.`,
    );
  }
  const parentId = (tuple.parentConfig?.configurable?.checkpoint_id as string | undefined) ?? null;
  const [state, parent] = await Promise.all([
    graph.getState(config),
    parentId ? graph.getState({ configurable: { ...config.configurable, checkpoint_id: parentId } }) : null,
  ]);
  const values = (state.values ?? {}) as Record<string, unknown>;
  const nodeOf = new Map(state.tasks.map((t) => [t.id, t.name]));
  const writes = tuple.pendingWrites ?? [];
  const finished = new Set(writes.filter(([, ch]) => !SPECIAL_CHANNELS.has(ch)).map(([taskId]) => taskId));

  let diff: CheckpointView["diff"] = null;
  // A parent deleted by retention reads as an empty snapshot without metadata: no diff rather than a false one.
  if (parentId && parent?.metadata) {
    const delta = differ.diff(
      comparable((parent.values ?? {}) as Record<string, unknown>),
      comparable(values),
    );
    diff = { against: parentId, delta: delta ?? null, changedKeys: changedKeys(delta) };
  }
  const metadata = tuple.metadata;
  return {
    threadId,
    checkpointId,
    parentCheckpointId: parentId,
    createdAt: tuple.checkpoint.ts || null,
    metadata: {
      step: typeof metadata?.step === "number" ? metadata.step : null,
      source: typeof metadata?.source === "string" ? metadata.source : null,
      parents: (metadata?.parents ?? {}) as Record<string, string>,
    },
    values: stateSnapshot(values),
    messages: toAguiMessages((values.messages as BaseMessage[] | undefined) ?? []),
    next: [...state.next],
    pendingWrites: writes.map(([taskId, channel, value]) => ({
      taskId,
      node: nodeOf.get(taskId) ?? null,
      channel,
      value: writeValue(value),
    })),
    interrupts: state.tasks.flatMap((task) =>
      task.interrupts.map((i): CheckpointInterruptView => {
        const parsed = agent.interrupts.parse(i.value);
        return {
          interruptId: requireId(i.id, `interrupt of task ${task.id}`),
          node: task.name,
          action: parsed.ok ? parsed.action : "unknown",
          payload: parsed.ok ? parsed.payload : null,
          ...(parsed.ok ? {} : { raw: jsonSafe(i.value) ?? null, invalid: parsed.error }),
          answered: finished.has(task.id),
        };
      }),
    ),
    diff,
  };
}
