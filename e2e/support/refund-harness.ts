import { randomUUID } from "node:crypto";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { Command } from "@langchain/langgraph";
import { refundAgent } from "@/lib/agents/refund/agent";
import { buildRefundGraph, type RefundGraph, refundGraphInput } from "@/lib/agents/refund/graph";
import { OfflineChatModel } from "@/lib/agents/refund/offline-model";
import type { RefundStateValue } from "@/lib/agents/refund/state";
import { DrizzleCheckpointSaver } from "@/lib/checkpoint/saver";
import { type InterruptAction, type PayloadOf, parseInterruptPayload } from "@/lib/contract/questions";
import type { Database } from "@/lib/db/open";
import { seedDemoOrders } from "@/lib/shop/demo-orders";
import { type Backend, openBackend } from "./backends";
import { recordAnswers } from "./receipts";

/*
 * Shared by the refund graph's integration tests: a migrated, seeded database of either kind, the real graph on our
 * checkpointer, and helpers that read interrupts the way the runtime does (from `getState().tasks[].interrupts`).
 */

/** The config of one test thread. */
export type ThreadConfig = { configurable: { thread_id: string } };

/** A seeded database and the refund graph on it; `close()` drops the database. */
export interface RefundHarness {
  database: Database;
  graph: RefundGraph;
  close(): Promise<void>;
}

/** Open a fresh database of `kind`, seed the demo orders and build the graph (offline model unless given one). */
export async function openRefundHarness(kind: Backend, model?: BaseChatModel): Promise<RefundHarness> {
  const backend = await openBackend(kind);
  const { database } = backend;
  await seedDemoOrders({ db: database.db });
  const graph = buildRefundGraph({
    checkpointer: new DrizzleCheckpointSaver(database.sql),
    db: database.db,
    model: model ?? new OfflineChatModel(),
  });
  databaseOf.set(graph, database.db);
  return { database, graph, close: () => backend.close() };
}

/** The database each harness graph writes to (its answers' receipts go there). */
const databaseOf = new WeakMap<RefundGraph, Database["db"]>();

/** A config for a new thread (a fresh thread id). */
export function newThread(): ThreadConfig {
  return { configurable: { thread_id: `refund-${randomUUID()}` } };
}

/** Start a thread with a customer message; returns its config once the graph has paused or finished. */
export async function startThread(graph: RefundGraph, customerMessage: string, orderRef?: string) {
  const config = newThread();
  await graph.invoke(refundGraphInput({ messageId: randomUUID(), customerMessage, orderRef }), config);
  return config;
}

/** Answer the open interrupt, as the ledger does: its decision receipt first (what the answer authorizes), then resume. */
export async function answer(graph: RefundGraph, config: ThreadConfig, value: unknown): Promise<void> {
  const db = databaseOf.get(graph);
  const open = await openInterrupts(graph, config);
  if (db && open.length === 1 && open[0]?.id) {
    await recordAnswers({
      db,
      agent: refundAgent,
      threadId: config.configurable.thread_id,
      answers: { [open[0].id]: [open[0].value, value] },
    });
  }
  await graph.invoke(new Command({ resume: value }), config);
}

/** The interrupts the thread waits on. */
export async function openInterrupts(graph: RefundGraph, config: ThreadConfig) {
  const state = await graph.getState(config);
  return state.tasks.flatMap((task) => task.interrupts);
}

/** Assert the thread waits on exactly one interrupt, of `action`, and return its typed payload. */
export async function expectWaitingFor<A extends InterruptAction>(
  graph: RefundGraph,
  config: ThreadConfig,
  action: A,
): Promise<PayloadOf<A>> {
  const interrupts = await openInterrupts(graph, config);
  expect(interrupts).toHaveLength(1);
  const parsed = parseInterruptPayload(interrupts[0]?.value);
  if (!parsed.ok) throw new Error(`interrupt outside the contract: ${parsed.error}`);
  expect(parsed.payload.action).toBe(action);
  return parsed.payload as PayloadOf<A>;
}

/** The thread's current state values. */
export async function valuesOf(graph: RefundGraph, config: ThreadConfig): Promise<RefundStateValue> {
  return (await graph.getState(config)).values as RefundStateValue;
}

/** Rows in a table for an order / thread, counted in SQL (not through the code under test). */
export async function countRows(
  database: Database,
  table: "refunds" | "outbox",
  where: { orderId?: string; threadId?: string },
): Promise<number> {
  const [column, value] = where.orderId ? ["order_id", where.orderId] : ["thread_id", where.threadId];
  const rows = await database.sql.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${table} WHERE ${column} = $1`,
    [value],
  );
  return rows[0]?.n ?? 0;
}
