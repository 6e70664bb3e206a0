import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Backend, openBackend } from "@/e2e/support/backends";
import type { Database } from "../open";
import { claimDecision, releaseClaim, renewClaims } from "./claims";
import { escalateOverdue, upsertSlaPolicy } from "./deadlines";
import { listPendingInbox } from "./inbox";
import { listInboxChanges } from "./inbox-changes";
import { readQueueState } from "./operations";
import { searchThreads } from "./search";
import { setThreadStatus } from "./threads";

/*
 * The queue's queries on both databases: claims (soft locks), deadlines from policy and escalation exactly once, the
 * change feed written by triggers, and search by order, email, name, text and thread id.
 */
async function seed(database: Database) {
  await database.sql.query(
    `INSERT INTO orders (id, customer_name, customer_email, amount_cents, placed_at, payment_method, items, status)
     VALUES ('ORD-9001', 'Greta Lindqvist', 'greta.l@example.com', 64000, now(), 'card', '[]', 'delivered'),
            ('ORD-9002', 'Omar Haddad', 'omar@example.com', 2500, now(), 'card', '[]', 'delivered')`,
  );
  await database.sql.query(
    `INSERT INTO threads (id, title, customer_message, order_ref, status) VALUES
       ('t-1', 'Broken kettle', 'The kettle from my order leaks water everywhere', 'ORD-9001', 'interrupted'),
       ('t-2', 'Late parcel', 'My parcel never arrived, please help', 'ORD-9002', 'interrupted')`,
  );
}

async function raise(
  database: Database,
  id: string,
  threadId: string,
  amount: number | null,
  ageSeconds = 0,
) {
  await database.sql.query(
    `INSERT INTO decisions (interrupt_id, thread_id, run_id, checkpoint_id, action, payload, amount_cents, created_at)
     VALUES ($1, $2, 'r', 'c', 'refund_approval', '{}', $3, now() - make_interval(secs => $4))`,
    [id, threadId, amount, ageSeconds],
  );
}

describe.each<Backend>(["pglite", "postgres"])("queue queries on %s", (kind) => {
  let backend: Awaited<ReturnType<typeof openBackend>>;
  let database: Database;
  beforeAll(async () => {
    backend = await openBackend(kind);
    database = backend.database;
    await seed(database);
  }, 120_000);
  afterAll(async () => {
    await backend?.close();
  });

  it("gives each decision its deadline from the matching policy (action and amount)", async () => {
    const { db } = database;
    await upsertSlaPolicy({
      db,
      policy: { action: "refund_approval", minAmountCents: 50_000, dueSeconds: 4 * 3600, expiryAnswer: null },
      by: "test",
    });
    await raise(database, "big", "t-1", 64_000);
    await raise(database, "small", "t-2", 2_500);
    const page = await listPendingInbox({ db });
    const left = Object.fromEntries(page.items.map((i) => [i.decision.interruptId, i.decision.secondsLeft]));
    expect(left.big).toBeGreaterThan(4 * 3600 - 60);
    expect(left.big).toBeLessThanOrEqual(4 * 3600);
    expect(left.small).toBeGreaterThan(86_400 - 60);
    // Sorted by time left: the 4 h item first.
    expect(page.items.map((i) => i.decision.interruptId)).toEqual(["big", "small"]);
  });

  it("claims: one holder at a time, take-over, renewal, release on decide, and the feed hears each", async () => {
    const { db } = database;
    const a = { id: "user-a", label: "a@example.com" };
    const b = { id: "user-b", label: "b@example.com" };
    expect((await claimDecision({ db, interruptId: "big", user: a, ttlMs: 60_000 })).status).toBe("claimed");
    const held = await claimDecision({ db, interruptId: "big", user: b, ttlMs: 60_000 });
    expect(held).toMatchObject({ status: "held", claim: { userLabel: "a@example.com" } });
    expect(await renewClaims({ db, userId: "user-a", ttlMs: 60_000 })).toEqual(["big"]);
    expect(
      (await listPendingInbox({ db, filter: { claimedBy: "user-a" } })).items.map(
        (i) => i.decision.interruptId,
      ),
    ).toEqual(["big"]);
    expect(
      (await listPendingInbox({ db, filter: { claimedBy: null } })).items.map((i) => i.decision.interruptId),
    ).toEqual(["small"]);
    expect(
      (await claimDecision({ db, interruptId: "big", user: b, ttlMs: 60_000, force: true })).status,
    ).toBe("claimed");
    expect(await releaseClaim({ db, interruptId: "big", userId: "user-a" })).toBe(false);
    // An expired claim is nobody's: anyone may claim it.
    await claimDecision({ db, interruptId: "small", user: a, ttlMs: 1_000 });
    await database.sql.query(
      "UPDATE decision_claims SET expires_at = now() - interval '1 second' WHERE interrupt_id = 'small'",
    );
    expect(
      (await listPendingInbox({ db })).items.find((i) => i.decision.interruptId === "small")?.decision.claim,
    ).toBeNull();
    expect((await claimDecision({ db, interruptId: "small", user: b, ttlMs: 60_000 })).status).toBe(
      "claimed",
    );
    // Deciding releases the claim (trigger).
    await database.sql.query("UPDATE decisions SET status = 'resolved' WHERE interrupt_id = 'small'");
    expect(await database.sql.query("SELECT * FROM decision_claims WHERE interrupt_id = 'small'")).toEqual(
      [],
    );
    expect((await claimDecision({ db, interruptId: "small", user: a, ttlMs: 60_000 })).status).toBe(
      "not_pending",
    );
    const kinds = (await listInboxChanges({ db, afterId: 0 })).map((c) => `${c.interruptId}:${c.kind}`);
    expect(kinds).toEqual(
      expect.arrayContaining([
        "big:raised",
        "small:raised",
        "big:claimed",
        "small:decided",
        "small:released",
      ]),
    );
  });

  it("escalates an overdue item exactly once", async () => {
    const { db } = database;
    await upsertSlaPolicy({
      db,
      policy: { action: "refund_approval", minAmountCents: 0, dueSeconds: 60, expiryAnswer: null },
      by: "test",
    });
    await raise(database, "old", "t-2", 100, 3600);
    const first = await escalateOverdue({ db });
    expect(first.map((e) => e.interruptId)).toEqual(["old"]);
    expect(await escalateOverdue({ db })).toEqual([]);
    expect(
      (await listPendingInbox({ db, filter: { escalated: true } })).items.map((i) => i.decision.interruptId),
    ).toEqual(["old"]);
  });

  it("counts a durable timer as a timer, not as pending work nor as its age", async () => {
    const { db } = database;
    const before = await readQueueState({ db });
    // A cooling-off that started two hours ago and a refund raised a minute ago.
    await database.sql.query(
      `INSERT INTO decisions (interrupt_id, thread_id, run_id, checkpoint_id, action, payload, created_at)
       VALUES ('timer-1', 't-1', 'r', 'c', 'wait_timer', '{}', now() - interval '2 hours')`,
    );
    await raise(database, "fresh", "t-1", 700, 60);
    const after = await readQueueState({ db });
    expect(after.pending).toBe(before.pending + 1);
    expect(after.pendingByAction.wait_timer).toBeUndefined();
    expect(after.pendingByAction.refund_approval).toBe((before.pendingByAction.refund_approval ?? 0) + 1);
    // The oldest work is what it was (or the new refund's minute): never the timer's two hours.
    expect(after.oldestAgeSeconds).toBeLessThan(2 * 3600 - 60);
    expect(after.oldestAgeSeconds).toBeGreaterThanOrEqual(Math.max(before.oldestAgeSeconds, 60));
    expect(after.timersWaiting).toBe(before.timersWaiting + 1);
  });

  it("finds threads by order number, email, name, words of the ticket and thread id", async () => {
    const { db } = database;
    const ids = async (q: string) => (await searchThreads({ db, q })).map((h) => h.threadId);
    expect(await ids("ORD-9001")).toEqual(["t-1"]);
    expect(await ids("ord-9002")).toEqual(["t-2"]);
    expect(await ids("GRETA.L@example.com")).toEqual(["t-1"]);
    expect(await ids("Lindqvist")).toEqual(["t-1"]);
    expect(await ids("omar")).toEqual(["t-2"]);
    expect(await ids("kettle leaks")).toEqual(["t-1"]);
    expect(await ids("parc")).toEqual(["t-2"]);
    expect(await ids("t-2")).toContain("t-2");
    expect(await ids("nothing-like-this")).toEqual([]);
    expect(await ids("'&|!:*()")).toEqual([]);
  });

  it("finds a customer's thread filed without an order once its agent found the order, and shows the customer", async () => {
    const { db } = database;
    await database.sql.query(
      `INSERT INTO threads (id, title, customer_message, order_ref, status) VALUES
         ('t-3', 'Leaking again', 'It leaks again, I do not have the number at hand', NULL, 'interrupted')`,
    );
    const hits = async (q: string) =>
      (await searchThreads({ db, q })).map(
        (h) => `${h.threadId} ${h.orderRef ?? "-"} ${h.customerName ?? "-"}`,
      );
    expect(await hits("Lindqvist")).toEqual(["t-1 ORD-9001 Greta Lindqvist"]);
    // The run ends: the agent says the thread is about ORD-9001 (an operator typed it, the agent looked it up).
    await setThreadStatus({ db, threadId: "t-3", status: "interrupted", contextOrder: "ORD-9001" });
    expect((await hits("Lindqvist")).sort()).toEqual([
      "t-1 ORD-9001 Greta Lindqvist",
      "t-3 ORD-9001 Greta Lindqvist",
    ]);
    expect((await hits("greta.l@example.com")).sort()).toEqual([
      "t-1 ORD-9001 Greta Lindqvist",
      "t-3 ORD-9001 Greta Lindqvist",
    ]);
    expect((await hits("ORD-9001")).sort()).toEqual([
      "t-1 ORD-9001 Greta Lindqvist",
      "t-3 ORD-9001 Greta Lindqvist",
    ]);
    // A later run that says nothing keeps what was found; the order as filed stays what the ticket system knew.
    await setThreadStatus({ db, threadId: "t-3", status: "completed" });
    expect(await hits("Lindqvist")).toHaveLength(2);
    const [row] = await database.sql.query<{ order_ref: string | null }>(
      "SELECT order_ref FROM threads WHERE id = 't-3'",
    );
    expect(row?.order_ref).toBeNull();
  });

  it("answers a common word or name with its newest matches, wherever they lie on disk", async () => {
    const { db } = database;
    // 1,200 tickets sharing a word and a customer name; the last ones written are the newest (an index read in disk
    // order meets the oldest first, and a sample of the first 1,000 matches would miss the newest 200).
    await database.sql.query(
      `INSERT INTO orders (id, customer_name, customer_email, amount_cents, placed_at, payment_method, items, status)
       SELECT 'ORD-7' || lpad(g::text, 5, '0'), 'Zora Quill', 'zora' || g || '@example.com', 100, now(), 'card', '[]',
         'delivered'
       FROM generate_series(1, 1200) AS g`,
    );
    await database.sql.query(
      `INSERT INTO threads (id, title, customer_message, order_ref, status, updated_at)
       SELECT 'g-' || lpad(g::text, 4, '0'), 'Gadget ' || g, 'My gizmo stopped working', 'ORD-7' || lpad(g::text, 5, '0'),
         'completed', now() + g * interval '1 second'
       FROM generate_series(1, 1200) AS g`,
    );
    const newest = Array.from({ length: 20 }, (_, i) => `g-${String(1200 - i).padStart(4, "0")}`);
    const found = async (
      q: string,
      options: { maxMatches?: number; nameMatches?: number; recentWindow?: number } = {},
    ) => (await searchThreads({ db, q, ...options })).map((h) => `${h.threadId} ${h.matched}`);
    const as = (matched: string) => newest.map((id) => `${id} ${matched}`);
    // Each way a word search can answer: among the newest threads; all matches read through the index (few of them);
    // the walk of all threads (many, few recent). The same newest 20 every time, for words and for names.
    const paths = [
      {},
      { recentWindow: 10, maxMatches: 5000, nameMatches: 5000 },
      { recentWindow: 10 },
      { recentWindow: 10, maxMatches: 50 },
    ];
    for (const options of paths) {
      expect(await found("gizmo", options), JSON.stringify(options)).toEqual(as("text"));
      expect(await found("zora", options), JSON.stringify(options)).toEqual(as("name"));
    }
    // Fewer matches than a page: the index read finds them all.
    expect(await found("gadget 1199", { recentWindow: 10 })).toEqual(["g-1199 text"]);
    expect(await found("gizm stopp")).toEqual(as("text"));
  });
});
