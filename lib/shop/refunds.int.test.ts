import { countPoolStatements } from "@/e2e/bench/measure";
import { openBackend } from "@/e2e/support/backends";
import { gate, untilWaitingOnLock } from "@/e2e/support/lock-wait";
import { recordApprovedRefund } from "@/e2e/support/receipts";
import { rowSealingKey } from "@/lib/db/vault";
import { type Database, openPostgres } from "../db/open";
import { listEmailsForThread, queueEmail } from "../db/queries/outbox";
import { seedDemoOrders } from "./demo-orders";
import { getOrder } from "./orders";
import { countRefundsForOrder, sumRefundsForOrder } from "./refunds";

// Real Postgres: the races below need concurrent sessions (PGlite serializes everything).
describe("refund and outbox queries on postgres", () => {
  let backend: Awaited<ReturnType<typeof openBackend>>;
  let database: Database;
  const effectsOf = async (threadId: string) =>
    database.sql.query<{ kind: string; idempotency_key: string; status: string; record_id: string }>(
      "SELECT kind, idempotency_key, status, record_id FROM effects WHERE thread_id = $1 ORDER BY created_at",
      [threadId],
    );

  beforeAll(async () => {
    backend = await openBackend("postgres");
    database = backend.database;
    expect(await seedDemoOrders({ db: database.db })).toEqual({ inserted: 12 });
  });
  afterAll(async () => {
    await backend?.close();
  });

  it("seeds idempotently and keeps the first seeding's dates", async () => {
    const before = await getOrder({ db: database.db, orderId: "ORD-1006" });
    const later = new Date(Date.now() + 7 * 86_400_000);
    expect(await seedDemoOrders({ db: database.db, now: later })).toEqual({ inserted: 0 });
    expect(await getOrder({ db: database.db, orderId: "ORD-1006" })).toEqual(before);
    expect(before).toMatchObject({ amountCents: 4500, paymentMethod: "card", status: "delivered" });
    expect(await getOrder({ db: database.db, orderId: "ORD-0000" })).toBeUndefined();
  });

  const refund = (decisionRef: string, amountCents: number, orderId = "ORD-1008") =>
    recordApprovedRefund({
      db: database.db,
      decisionRef,
      orderId,
      threadId: `thread-${orderId}`,
      amountCents,
      currency: "EUR",
      method: "original_payment",
    });

  it("records one refund and one payment intent per decision, however many re-runs race for it", async () => {
    const attempts = await Promise.all(Array.from({ length: 8 }, () => refund("decision-a", 1000)));
    expect(attempts.every((a) => a.ok)).toBe(true);
    const ids = new Set(attempts.map((a) => (a.ok ? a.refund.id : "")));
    expect(ids.size).toBe(1);
    expect(new Set(attempts.map((a) => (a.ok ? a.effect.id : ""))).size).toBe(1);
    // Whichever attempt recorded it and whichever found it answer with the same rows, as they are stored.
    for (const attempt of attempts) expect(attempt).toEqual(attempts[0]);
    const stored = await database.sql.query(
      "SELECT id, created_at FROM refunds WHERE idempotency_key = 'refund:decision-a'",
    );
    expect(attempts[0]?.ok && attempts[0].refund.createdAt).toEqual(stored[0]?.created_at);
    expect(await countRefundsForOrder({ db: database.db, orderId: "ORD-1008" })).toBe(1);
    const effects = await effectsOf("thread-ORD-1008");
    expect(effects).toEqual([
      { kind: "payment", idempotency_key: "refund:decision-a", status: "queued", record_id: [...ids][0] },
    ]);
  });

  it("records each decision's partial refund, up to the order total, with the order row locked", async () => {
    // ORD-1002 is €249.00. Eight different decisions race for €50 each: four fit (€200), a fifth would not.
    const attempts = await Promise.all(
      Array.from({ length: 8 }, (_, i) => refund(`partial-${i}`, 5000, "ORD-1002")),
    );
    expect(attempts.filter((a) => a.ok)).toHaveLength(4);
    const refusals = attempts.filter((a) => !a.ok);
    expect(refusals).toHaveLength(4);
    for (const r of refusals)
      expect(r).toEqual({ ok: false, reason: "exceeds_total", refundedCents: 20000, refundableCents: 4900 });
    expect(await sumRefundsForOrder({ db: database.db, orderId: "ORD-1002" })).toBe(20000);
    // The rest fits exactly; nothing more after it.
    expect((await refund("partial-rest", 4900, "ORD-1002")).ok).toBe(true);
    expect(await refund("partial-more", 1, "ORD-1002")).toEqual({
      ok: false,
      reason: "exceeds_total",
      refundedCents: 24900,
      refundableCents: 0,
    });
    // A re-run of an earlier decision still finds its own refund (it is not refused as "too much").
    const again = await refund("partial-rest", 4900, "ORD-1002");
    expect(again.ok && again.refund.amountCents).toBe(4900);
    expect((await effectsOf("thread-ORD-1002")).filter((e) => e.kind === "payment")).toHaveLength(5);
  });

  it("queues one email per approving decision: a re-run finds its own, another decision is a new email", async () => {
    const send = (decisionRef: string, subject: string) =>
      queueEmail({ db: database.db, decisionRef, threadId: "t-1", to: "a@example.com", subject, body: "B" });
    const first = await send("confirm-1", "S");
    const again = await send("confirm-1", "S (re-run)");
    expect(again).toEqual(first);
    const edited = await send("confirm-2", "S2");
    expect(edited.email.id).not.toBe(first.email.id);
    expect(edited.effect.id).not.toBe(first.effect.id);
    expect((await listEmailsForThread({ db: database.db, threadId: "t-1" })).map((e) => e.subject)).toEqual([
      "S",
      "S2",
    ]);
    expect((await effectsOf("t-1")).map((e) => [e.kind, e.idempotency_key])).toEqual([
      ["email", "email:confirm-1"],
      ["email", "email:confirm-2"],
    ]);
  });

  it("queues one email and one effect however many re-runs race for the decision, each answer the same", async () => {
    const attempts = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        queueEmail({
          db: database.db,
          decisionRef: "race-1",
          threadId: "t-2",
          to: "b@example.com",
          subject: `S${i}`,
          body: "B",
        }),
      ),
    );
    const [first] = attempts;
    for (const attempt of attempts) expect(attempt).toEqual(first);
    expect(await listEmailsForThread({ db: database.db, threadId: "t-2" })).toEqual([first?.email]);
    expect((await effectsOf("t-2")).map((e) => [e.idempotency_key, e.record_id])).toEqual([
      ["email:race-1", first?.email.id],
    ]);
  });

  it("a re-run that waits for another attempt's email, still uncommitted, answers with that email and its effect", async () => {
    const send = (db: Database["db"]) =>
      queueEmail({
        db,
        decisionRef: "wait-1",
        threadId: "t-4",
        to: "d@example.com",
        subject: "S",
        body: "B",
      });
    const { opened: released, open: release } = gate();
    const { opened: isQueued, open: queued } = gate();
    // The first attempt has queued its email and effect but not committed them yet.
    const first = database.db.transaction(async (tx) => {
      const answer = await send(tx as unknown as Database["db"]);
      queued();
      await released;
      return answer;
    });
    await isQueued;
    const second = send(database.db);
    // The second waits on the first's key (its snapshot, taken before that commit, cannot see the first's rows).
    await untilWaitingOnLock(database.sql);
    release();
    expect(await second).toEqual(await first);
    expect((await effectsOf("t-4")).map((e) => e.idempotency_key)).toEqual(["email:wait-1"]);
  });

  it("queues a new email and its effect in one statement, its answer equal to what is stored", async () => {
    // A pool of its own, counted from its first connection.
    const own = openPostgres(database.pool!.options.connectionString as string, { max: 1 });
    const counter = countPoolStatements(own.pool!);
    // One statement once the thread's key (here: that it has none) and the sealing rule are known, as they are for
    // a run's next write.
    await rowSealingKey(own.db, "t-5");
    const before = counter.statements;
    const queued = await queueEmail({
      db: own.db,
      decisionRef: "one-1",
      threadId: "t-5",
      to: "e@example.com",
      subject: "S",
      body: "B\u2028é",
    });
    expect(counter.statements - before).toBe(1);
    await own.close();
    // Read back as Drizzle reads rows: the answer is what is stored, field for field.
    const again = await queueEmail({
      db: database.db,
      decisionRef: "one-1",
      threadId: "t-5",
      to: "e@example.com",
      subject: "other",
      body: "other",
    });
    expect(again).toEqual(queued);
    expect(queued.effect).toMatchObject({
      kind: "email",
      status: "queued",
      attempts: 0,
      recordId: queued.email.id,
      payload: { emailId: queued.email.id, to: "e@example.com", subject: "S", body: "B\u2028é" },
    });
    expect(queued.effect.createdAt).toBeInstanceOf(Date);
  });

  it("an email whose effect is gone: queued again, the new effect delivers the email already queued", async () => {
    const first = await queueEmail({
      db: database.db,
      decisionRef: "gone-1",
      threadId: "t-3",
      to: "c@example.com",
      subject: "S",
      body: "B",
    });
    await database.sql.query("DELETE FROM effects WHERE id = $1", [first.effect.id]);
    const again = await queueEmail({
      db: database.db,
      decisionRef: "gone-1",
      threadId: "t-3",
      to: "c@example.com",
      subject: "other",
      body: "other",
    });
    expect(again.email).toEqual(first.email);
    expect(again.effect.id).not.toBe(first.effect.id);
    expect(again.effect.recordId).toBe(first.email.id);
    expect(again.effect.payload).toEqual({
      emailId: first.email.id,
      to: "c@example.com",
      subject: "S",
      body: "B",
    });
  });
});

describe("the email queue on embedded PGlite", () => {
  let backend: Awaited<ReturnType<typeof openBackend>>;
  beforeAll(async () => {
    backend = await openBackend("pglite");
  }, 120_000);
  afterAll(async () => {
    await backend?.close();
  });

  it("answers a new email and a re-run's alike, as stored", async () => {
    const send = (subject: string) =>
      queueEmail({
        db: backend.database.db,
        decisionRef: "embedded-1",
        threadId: "t-e",
        to: "f@example.com",
        subject,
        body: "B",
      });
    const first = await send("S");
    expect(first.effect).toMatchObject({ kind: "email", status: "queued", recordId: first.email.id });
    expect(first.email.createdAt).toBeInstanceOf(Date);
    expect(await send("S (re-run)")).toEqual(first);
  });
});
