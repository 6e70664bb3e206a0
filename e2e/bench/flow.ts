import { createTicket, postRun } from "@/e2e/api/client";

/** One refund ticket's legs (ms): create and run to the approval, approve to the reply, send to the end. */
export interface FlowSample {
  create: number;
  approve: number;
  send: number;
}

/** POST a run and read its SSE until RUN_FINISHED / RUN_ERROR; returns the final event. */
async function run(
  base: string,
  threadId: string,
  body: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const { status, text } = await postRun(
    base,
    threadId,
    { threadId, runId: crypto.randomUUID(), messages: [], tools: [], context: [], ...body },
    "resume" in body ? "supervisor" : "intake",
  );
  if (status !== 200) throw new Error(`run: ${status} ${text}`);
  const events = text
    .split("\n")
    .filter((l) => l.startsWith("data: "))
    .map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>);
  const last = events[events.length - 1];
  if (last?.type !== "RUN_FINISHED") throw new Error(`run ended with ${JSON.stringify(last)}`);
  return last;
}

function interruptIdOf(finished: Record<string, unknown>): string {
  const outcome = finished.outcome as { type: string; interrupts?: { id: string }[] };
  const id = outcome.interrupts?.[0]?.id;
  if (!id) throw new Error(`expected an interrupt, got ${JSON.stringify(outcome)}`);
  return id;
}

/** The refund flow over HTTP for one order: ticket → approval interrupt → approve → reply confirmation → send. */
export async function refundThread(base: string, order: string): Promise<FlowSample> {
  const message = `Please refund ${order}, the television arrived broken.`;
  const t0 = performance.now();
  const threadId = await createTicket(base, message);
  const paused = await run(base, threadId, {
    messages: [{ id: crypto.randomUUID(), role: "user", content: message }],
  });
  const t1 = performance.now();
  const email = await run(base, threadId, {
    resume: [{ interruptId: interruptIdOf(paused), status: "resolved", payload: { decision: "approve" } }],
  });
  const t2 = performance.now();
  const done = await run(base, threadId, {
    resume: [{ interruptId: interruptIdOf(email), status: "resolved", payload: { choice: "send" } }],
  });
  const t3 = performance.now();
  if ((done.outcome as { type: string }).type !== "success") throw new Error("thread did not finish");
  return { create: t1 - t0, approve: t2 - t1, send: t3 - t2 };
}

/** `count` delivered television orders ORD-<first>… that always need an approval (the classifier knows ORD-####). */
export const BENCH_ORDERS_SQL = `INSERT INTO orders (id, customer_name, customer_email, amount_cents, currency, placed_at, payment_method, items, status)
  SELECT 'ORD-' || ($1::int + g), 'Customer ' || g, 'c' || g || '@example.com', 50000, 'EUR', now() - interval '2 days', 'card',
    '[{"sku":"TV","name":"Television","quantity":1,"unitCents":50000}]'::jsonb, 'delivered'
  FROM generate_series(0, $2::int - 1) AS g`;
