import type { InboxDecisionItem, InboxPage } from "@/lib/contract/inbox";
import type { Principal } from "@/lib/contract/roles";
import { type Database, openPostgres } from "@/lib/db/open";
import { listInbox } from "@/lib/db/queries/inbox";
import { markDecidable } from "@/lib/queue/inbox-marks";
import { firstRefusal, mayDecide } from "@/lib/runtime/agents/may-decide";
import { emailOf, type Who } from "../support/auth";
import { pausedAtApproval } from "./client";
import { useTestServer } from "./setup";

/** Every statement sent on the pool's connections: its text and its parameters. */
function recordStatements(database: Database) {
  const seen: { text: string; values: unknown[] }[] = [];
  database.pool!.on("connect", (client) => {
    const target = client as unknown as { query: (...args: unknown[]) => unknown };
    const original = target.query;
    target.query = function (this: unknown, ...args: unknown[]) {
      const [first, second] = args as [unknown, unknown];
      const config =
        typeof first === "string" ? { text: first, values: second } : (first as Record<string, unknown>);
      seen.push({ text: String(config.text ?? ""), values: (config.values ?? second ?? []) as unknown[] });
      return original.apply(this, args);
    };
  });
  return seen;
}

/**
 * The operator's inbox marks each pending decision they may not take (four-eyes, amount) before the click. A page of
 * many threads is judged with one read of the threads, one of their pending decisions and one of who was involved in
 * them — not three per thread — and each mark is what the thread's own page says.
 */
describe("decide marks on an inbox page", () => {
  const ctx = useTestServer("marks");
  let database: Database;
  afterAll(async () => {
    await database?.close();
  });

  const paused = (order: string, startedBy: Who) => pausedAtApproval(ctx.server!.url, order, startedBy);

  it("reads the page's threads, pending decisions and who was involved once each, and marks each as the thread page does", async () => {
    // Above the four-eyes amount (an operator may not approve), below it (they may), and below it but started by
    // the operator themself (they may not approve their own).
    const plan: [string, Who][] = [
      ["ORD-1008", "intake"],
      ["ORD-1008", "intake"],
      ["ORD-1008", "intake"],
      ["ORD-1002", "intake"],
      ["ORD-1002", "intake"],
      ["ORD-1002", "intake"],
      ["ORD-1002", "operator"],
      ["ORD-1002", "operator"],
    ];
    for (const [order, who] of plan) await paused(order, who);

    database = openPostgres(ctx.prepared.url, { max: 2 });
    const seen = recordStatements(database);
    const [operator] = await ctx.prepared.sql.rows<{ id: string }>(
      "SELECT id FROM auth_users WHERE email = $1",
      [emailOf("operator")],
    );
    const principal: Principal = {
      kind: "user",
      id: operator!.id,
      label: emailOf("operator"),
      role: "operator",
    };
    const page = (await listInbox({ db: database.db, limit: 50 })) as InboxPage<InboxDecisionItem>;
    expect(page.items).toHaveLength(plan.length);

    seen.length = 0;
    const marked = await markDecidable({ db: database.db, page, principal });
    const threadReads = seen.filter((s) => /from "threads"/i.test(s.text));
    const pendingReads = seen.filter((s) => /from "decisions"/i.test(s.text) && s.values.includes("pending"));
    // Who was involved (four-eyes), for every thread whose approval acts on the world: one read for the page.
    const involvedReads = seen.filter((s) => /from "runs"/i.test(s.text));
    expect({
      threadReads: threadReads.length,
      pendingReads: pendingReads.length,
      involvedReads: involvedReads.length,
    }).toEqual({ threadReads: 1, pendingReads: 1, involvedReads: 1 });

    // Each mark is the thread page's own verdict for that decision.
    for (const item of marked.items as (InboxDecisionItem & {
      refusal?: { code: string; reason: string };
    })[]) {
      const own = (await mayDecide({ db: database.db, threadId: item.thread.threadId, principal })).filter(
        (v) => v.interruptId === item.decision.interruptId || v.interruptId === "*",
      );
      const refusal = firstRefusal(own);
      expect(item.refusal ?? null).toEqual(refusal ? { code: refusal.code, reason: refusal.reason } : null);
    }
    const codes = (marked.items as { refusal?: { code: string } }[])
      .map((i) => i.refusal?.code ?? "may")
      .sort();
    expect(codes.filter((c) => c === "may")).toHaveLength(3);
    expect(new Set(codes.filter((c) => c !== "may")).size).toBe(2); // the amount rule and the own-thread rule
  });
});
