import "server-only";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { resumeToCommand } from "@/lib/agui";
import { ReadOnlySaver } from "@/lib/checkpoint/read-only-saver";
import { DrizzleCheckpointSaver } from "@/lib/checkpoint/saver";
import { scratchCopy } from "@/lib/checkpoint/scratch-saver";
import { canonicalPayload } from "@/lib/contract/canonical-json";
import { AppError, appErrorOf } from "@/lib/contract/errors";
import type { Principal } from "@/lib/contract/roles";
import type { AppDb, Database } from "@/lib/db/client";
import {
  listPendingDecisions,
  listThreadDecisions,
  recordPendingDecisions,
} from "@/lib/db/queries/decisions";
import { listThreadEffects } from "@/lib/db/queries/effects";
import type { Decision, Thread } from "@/lib/db/schema";
import type { Tx } from "@/lib/db/tx";
import type { AgentDefinition, AgentGraph, AgentMigration } from "../agents/registry";
import { findAgent, listRefusedVersions } from "../agents/registry";
import { askAgain } from "./asked-again";
import { declaredMigration, pendingNodesOf, stateValues } from "./migrate";
import { settle } from "./settle";

/*
 * The deploy shadow: what would this build do with a thread that waits for a person? The thread is continued here as
 * this build would continue it — on its pinned version, or moved by the migration this build declares — in a sandbox:
 * a scratch copy of its checkpoints in memory, and every database write of the answer and of the graph's steps (the
 * decision, its receipt, the ledger, effects, audit) in one transaction that is rolled back. Nothing is delivered:
 * effects are only recorded (delivery is the dispatcher's, which the shadow never starts), and the recording is rolled
 * back. The outcome — the question asked again, the next question, the effects recorded — is compared with the same
 * outcome from the build that serves the database now (scripts/deploy-shadow.ts).
 */

/** Who answers in the shadow: an admin, so the answer is judged by the policy and not refused for its role. */
const SHADOW: Principal = { kind: "user", id: "system:deploy-shadow", label: "deploy shadow", role: "admin" };

/**
 * The answer the shadow gives a waiting question (its kind's acting answer — approve, send — or its refusal): given by
 * the caller, which knows the app's question kinds (the runtime does not).
 */
export type ShadowAnswer = (decision: Pick<Decision, "action" | "payload">) => unknown;

export interface SeenQuestion {
  action: string;
  payload: unknown;
  /** Whether an answer to it acts on the world (approve, send): a change in it shows money or a customer's words. */
  acts: boolean;
}

export interface SeenEffect {
  kind: string;
  status: string;
  /** Whether a decision receipt authorizes it (an unauthorized one is held for an operator). */
  authorized: boolean;
  /** What the connector would send, without the ids the recording made up (a refund's or an email's row id). */
  payload: Record<string, unknown>;
}

export interface ShadowOutcome {
  threadId: string;
  agent: string;
  /** The version the thread is pinned to. */
  pinned: string;
  /** The version this build continues it on (null when it would not). */
  ranOn: string | null;
  migrated: boolean;
  /** The questions the thread waits on, as this build asks them again (with a migration: under new ids). */
  asked: SeenQuestion[];
  /** Whether they are the questions the ledger recorded (same kind, same payload). */
  askedAsRecorded: boolean;
  /** What each waiting question was answered. */
  answers: SeenQuestion[];
  /** The questions raised after the answers (none: the thread ended). */
  next: SeenQuestion[];
  effects: SeenEffect[];
  error: { code: string; message: string } | null;
}

const SANDBOX = "internal:shadow_sandbox";

/** Continue one paused thread as this build would, in a sandbox; never throws (an error is part of the outcome). */
export async function shadowThread({
  database,
  thread,
  answer,
  timeoutMs = 30_000,
}: {
  database: Database;
  thread: Thread;
  answer: ShadowAnswer;
  timeoutMs?: number;
}): Promise<ShadowOutcome> {
  const outcome: ShadowOutcome = {
    threadId: thread.id,
    agent: thread.agentId,
    pinned: thread.agentVersion,
    ranOn: null,
    migrated: false,
    asked: [],
    askedAsRecorded: false,
    answers: [],
    next: [],
    effects: [],
    error: null,
  };
  try {
    const pending = await listPendingDecisions({ db: database.db, threadId: thread.id });
    if (pending.length === 0)
      throw new AppError("conflict:thread_moved", "The thread waits for no decision.");
    const { agent, migration } = continuation(thread);
    outcome.ranOn = agent.version;
    outcome.migrated = migration !== null;
    const real = new DrizzleCheckpointSaver(database.checkpointSql);
    // Read everything the thread has before the sandbox opens: on the embedded database a read outside the open
    // transaction would wait for it.
    const scratch = await scratchCopy(real, thread.id);
    if (!migration) {
      const replay = agent.build({ checkpointer: new ReadOnlySaver(real), db: database.db });
      const asked = await askAgain(replay, thread.id);
      outcome.asked = pending.map((d) => seen(agent, asked.get(d.interruptId) ?? null, d.action));
      outcome.askedAsRecorded = pending.every(
        (d) =>
          asked.has(d.interruptId) &&
          canonicalPayload(asked.get(d.interruptId)) === canonicalPayload(d.payload),
      );
    }
    await inSandbox(database.db, async (tx) => {
      const graph = agent.build({ checkpointer: scratch, db: tx as unknown as AppDb });
      const known = migration
        ? await askAfterMigration({
            tx,
            scratch,
            graph,
            agent,
            migration,
            thread,
            pending,
            outcome,
            timeoutMs,
          })
        : pending;
      const effectsBefore = new Set(
        (await listThreadEffects({ db: tx, threadId: thread.id })).map((e) => e.id),
      );
      const entries = known.map((d) => ({
        interruptId: d.interruptId,
        status: "resolved" as const,
        payload: answer(d),
      }));
      outcome.answers = known.map((d, i) => ({
        action: d.action,
        payload: entries[i]?.payload ?? null,
        acts: false,
      }));
      const deciding = { ...thread, agentVersion: agent.version };
      const input = await settle(
        tx,
        deciding,
        new Map(known.map((d) => [d.interruptId, d])),
        entries,
        SHADOW,
        null,
      );
      if (input.kind !== "resume") throw new Error("shadow: the answers did not make a resume");
      const ledger = await listThreadDecisions({ db: tx, threadId: thread.id });
      const raised = await questionsRaised(graph, resumeToCommand(input.resume), thread.id, timeoutMs, {
        operator_id: SHADOW.label,
        expected_interrupts: [...new Set(ledger.map((d) => canonicalPayload(d.payload)))],
      });
      outcome.next = raised.map((q) => seen(agent, q.value));
      outcome.effects = (await listThreadEffects({ db: tx, threadId: thread.id }))
        .filter((e) => !effectsBefore.has(e.id))
        .map((e) => ({
          kind: e.kind,
          status: e.status,
          authorized: e.receiptId !== null,
          payload: withoutMadeUpIds(e.payload as Record<string, unknown>),
        }));
    });
  } catch (error) {
    const known = appErrorOf(error);
    outcome.error = {
      code: known?.code ?? "internal:unexpected",
      message: (known?.message ?? (error instanceof Error ? error.message : String(error))).slice(0, 500),
    };
  }
  return outcome;
}

/** The version this build continues the thread on, and the migration that moves it there (if one applies). */
function continuation(thread: Thread): { agent: AgentDefinition; migration: AgentMigration | null } {
  const declared = declaredMigration(thread);
  if (declared) return { agent: declared.agent, migration: declared.migration };
  const refused = listRefusedVersions().find(
    (r) => r.agent === thread.agentId && r.version === thread.agentVersion,
  );
  if (refused) {
    throw new AppError(
      "conflict:graph_version",
      `This build refuses ${thread.agentId} version ${thread.agentVersion}: its graph is not what the version declares (declared ${refused.declared}, built ${refused.actual}). It would not continue this thread.`,
    );
  }
  const agent = findAgent(thread.agentId, thread.agentVersion);
  if (!agent) {
    throw new AppError(
      "conflict:graph_version",
      `This build has no ${thread.agentId} version ${thread.agentVersion} and declares no migration from it: the thread would wait for a supervisor.`,
    );
  }
  return { agent, migration: null };
}

/**
 * Move the scratch copy as the migration would (its state update, applied as its node), run the new version to the
 * question it asks again, and record that question as the runtime records a pause. Returns the new pending decisions.
 */
async function askAfterMigration({
  tx,
  scratch,
  graph,
  agent,
  migration,
  thread,
  pending,
  outcome,
  timeoutMs,
}: {
  tx: Tx;
  scratch: BaseCheckpointSaver;
  graph: AgentGraph;
  agent: AgentDefinition;
  migration: AgentMigration;
  thread: Thread;
  pending: Decision[];
  outcome: ShadowOutcome;
  timeoutMs: number;
}): Promise<Decision[]> {
  const root = { configurable: { thread_id: thread.id } };
  const tuple = (await scratch.getTuple({ configurable: { thread_id: thread.id, checkpoint_ns: "" } }))
    ?.checkpoint;
  if (!tuple) throw new AppError("conflict:thread_moved", "The thread has no checkpoint to migrate.");
  const moved = migration.migrate({ values: stateValues(tuple), pendingNodes: pendingNodesOf(tuple) });
  if (!moved) {
    throw new AppError(
      "conflict:graph_version",
      `The migration of ${thread.agentId} to version ${agent.version} does not move a thread paused where this one is: it would wait for a supervisor.`,
    );
  }
  await graph.updateState(root, moved.values, moved.asNode);
  const raised = await questionsRaised(graph, null, thread.id, timeoutMs, {});
  const checkpointId = ((await graph.getState(root)).config.configurable?.checkpoint_id as string) ?? "";
  const questions = raised.map((q) => ({ id: q.id, ...seen(agent, q.value) }));
  outcome.asked = questions.map(({ action, payload, acts }) => ({ action, payload, acts }));
  const key = (q: { action: string; payload: unknown }) => `${q.action} ${canonicalPayload(q.payload)}`;
  outcome.askedAsRecorded =
    questions.map(key).sort().join("\n") ===
    pending
      .map((d) => key(d))
      .sort()
      .join("\n");
  await recordPendingDecisions({
    db: tx,
    rows: questions.map((q) => ({
      interruptId: q.id,
      threadId: thread.id,
      runId: pending[0]?.runId ?? "shadow",
      checkpointId,
      action: q.action,
      payload: q.payload,
      title: null,
      orderId: null,
      customerName: null,
      amountCents: null,
      currency: null,
    })),
  });
  const ids = new Set(questions.map((q) => q.id));
  return (await listPendingDecisions({ db: tx, threadId: thread.id })).filter((d) => ids.has(d.interruptId));
}

/** Run the graph with `input` until it pauses or ends; the interrupts it raised (nested graphs included). */
async function questionsRaised(
  graph: AgentGraph,
  input: unknown,
  threadId: string,
  timeoutMs: number,
  configurable: Record<string, unknown>,
): Promise<{ id: string; value: unknown }[]> {
  const raised = new Map<string, unknown>();
  const stream = await graph.stream(input, {
    configurable: { thread_id: threadId, ...configurable },
    streamMode: "updates",
    subgraphs: true,
    signal: AbortSignal.timeout(timeoutMs),
  });
  for await (const item of stream as AsyncIterable<[string[], Record<string, unknown>]>) {
    const interrupts = item[1]?.__interrupt__ as { id?: string; value?: unknown }[] | undefined;
    for (const i of interrupts ?? []) if (i.id) raised.set(i.id, i.value);
  }
  return [...raised].map(([id, value]) => ({ id, value }));
}

function seen(agent: AgentDefinition, value: unknown, action = "unknown"): SeenQuestion {
  const parsed = agent.interrupts.parse(value);
  if (!parsed.ok) return { action, payload: value ?? null, acts: false };
  const acting = agent.interrupts.actingAnswer?.(parsed.payload);
  return { action: parsed.action, payload: value ?? null, acts: acting !== null && acting !== undefined };
}

/** A payload without the row ids its recording made up (they differ on every run); an order id stays. */
function withoutMadeUpIds(payload: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(payload).filter(([key]) => !/Id$/.test(key) || key === "orderId"));
}

/** Run `work` in a transaction that is always rolled back. */
async function inSandbox(db: AppDb, work: (tx: Tx) => Promise<void>): Promise<void> {
  try {
    await db.transaction(async (tx) => {
      await work(tx);
      throw Object.assign(new Error("shadow sandbox rolled back"), { code: SANDBOX });
    });
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === SANDBOX) return;
    throw error;
  }
}
