import "server-only";
import { randomUUID } from "node:crypto";
import type { RunAgentInput } from "@ag-ui/core";
import { count } from "drizzle-orm";
import type { Principal } from "@/lib/contract/roles";
import type { Database } from "@/lib/db/client";
import { createThread } from "@/lib/db/queries/threads";
import { threads } from "@/lib/db/schema";
import { env } from "@/lib/platform/env";
import { logger } from "@/lib/platform/observability/logger";
import { claimRun } from "../runs/claim";
import { activeRuns, startedWith, startRunInBackground } from "../runs/executor";
import { forkThread } from "../runs/fork";
import { getThreadView } from "../views/thread-view";

type Answer = Record<string, unknown>;

/**
 * The demo seed files tickets like an intake system and decides like a supervisor (two principals: four eyes). The
 * decider stands for a person (kind `user`): a system may not approve or send (lib/runtime/agents/system-policy.ts), and the
 * demo's approvals are a person's in the story it tells — through the same policy as anyone's.
 */
const DEMO_INTAKE: Principal = { kind: "system", id: "system:demo-intake", label: "demo intake", role: null };
const DEMO_OPERATOR: Principal = {
  kind: "user",
  id: "demo:supervisor",
  label: "demo supervisor",
  role: "supervisor",
};

/** Run one request to its end in this process (the demo seed drives threads like an operator would). */
async function run(
  database: Database,
  threadId: string,
  input: Partial<RunAgentInput>,
  principal: Principal = DEMO_OPERATOR,
): Promise<void> {
  const full: RunAgentInput = {
    threadId,
    runId: randomUUID(),
    messages: [],
    tools: [],
    context: [],
    ...input,
  };
  const result = await claimRun({ database, threadId, input: full, principal, leaseMs: env.RUN_LEASE_MS });
  if ("queued" in result) throw new Error(`demo: thread ${threadId} was busy`);
  const { run: claimed, startSeq } = result;
  startRunInBackground({ database, run: claimed, startSeq, options: startedWith(result) });
  await activeRuns().get(claimed.id)?.done;
}

async function ticket(database: Database, title: string, message: string, wait = true): Promise<string> {
  const thread = await createThread({
    db: database.db,
    title,
    customerMessage: message,
    orderRef: null,
    createdBy: DEMO_INTAKE.id,
  });
  const first = run(
    database,
    thread.id,
    { messages: [{ id: randomUUID(), role: "user", content: message }] },
    DEMO_INTAKE,
  );
  if (wait) await first;
  return thread.id;
}

/** Answer whatever the thread waits for with `answers[action]`, until it waits for something not listed. */
async function answer(database: Database, threadId: string, answers: Record<string, Answer>): Promise<void> {
  for (;;) {
    const view = await getThreadView({ db: database.db, threadId });
    const pending = view.pendingInterrupts;
    if (pending.length === 0 || !pending.every((p) => answers[p.action])) return;
    await run(database, threadId, {
      resume: pending.map((p) => ({
        interruptId: p.interruptId,
        status: "resolved" as const,
        payload: answers[p.action],
      })),
    });
  }
}

/**
 * On an empty database, a few tickets in different states so a newcomer's console shows the product at once:
 * pending approval, pending choice, a missing order number, finished, a forked thread, and one running as the
 * console opens. Runs in the background of start-up; skipped when any thread exists or DEMO_THREADS=false.
 */
export async function seedDemoThreads({ database }: { database: Database }): Promise<void> {
  const { db } = database;
  const [row] = await db.select({ n: count() }).from(threads);
  if ((row?.n ?? 0) > 0) return;
  logger().info("demo: creating demo tickets");
  await ticket(
    database,
    "Headphones stopped charging",
    "Hi, the wireless headphones from order ORD-1002 stopped charging after a week. I'd like my money back.",
  );
  const backpack = await ticket(
    database,
    "Torn backpack",
    "The canvas backpack from ORD-1004 tore on the second day. Refund please.",
  );
  await answer(database, backpack, { refund_approval: { decision: "approve" } });
  await ticket(
    database,
    "Broken lamp, no order number",
    "Hello, the lamp I bought is broken. Can I get a refund?",
  );
  const mug = await ticket(
    database,
    "Chipped mugs",
    "Both mugs from ORD-1001 arrived chipped. Could I get a refund?",
  );
  await answer(database, mug, { confirm_email: { choice: "send" } });
  const laptop = await ticket(
    database,
    "Scratched laptop",
    "The laptop from ORD-1008 has a deep scratch on the lid. I want a refund.",
  );
  await answer(database, laptop, {
    refund_approval: { decision: "approve_partial", amountCents: 20000, note: "Cosmetic damage only" },
    confirm_email: { choice: "send" },
  });
  const approval = (await getThreadView({ db: database.db, threadId: laptop })).decisions.find(
    (d) => d.action === "refund_approval",
  );
  if (approval) {
    const fork = await forkThread({
      database,
      threadId: laptop,
      checkpointId: approval.checkpointId,
      by: DEMO_OPERATOR,
    });
    await activeRuns().get(fork.runId)?.done;
    await answer(database, laptop, {
      refund_approval: { decision: "reject", note: "What if we had said no?" },
      confirm_email: { choice: "dont_send" },
    });
  }
  await ticket(
    database,
    "Wrong size T-shirts",
    "The T-shirts from ORD-1003 are the wrong size, please refund them.",
    false,
  );
  logger().info("demo: demo tickets ready");
}
