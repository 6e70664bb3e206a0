import { openBackend } from "@/e2e/support/backends";
import type { Database } from "../open";
import { seedDemoOrders } from "../seed/demo-orders";
import { getOrder } from "./orders";
import { listEmailsForThread, queueEmail } from "./outbox";
import { countRefundsForOrder, recordRefund, sumRefundsForOrder } from "./refunds";

// Real Postgres: the race below needs concurrent sessions (PGlite serializes everything).
describe("refund and outbox queries on postgres", () => {
  let backend: Awaited<ReturnType<typeof openBackend>>;
  let database: Database;

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

  it("records one refund per order however many callers race for it", async () => {
    const attempts = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        recordRefund({
          db: database.db,
          orderId: "ORD-1008",
          threadId: `thread-${i}`,
          amountCents: 1000 + i,
          currency: "EUR",
          method: "original_payment",
          approvedBy: `operator-${i}`,
        }),
      ),
    );
    expect(attempts.filter((a) => !a.duplicate)).toHaveLength(1);
    expect(new Set(attempts.map((a) => a.refund.id)).size).toBe(1);
    expect(await countRefundsForOrder({ db: database.db, orderId: "ORD-1008" })).toBe(1);
    const winner = attempts.find((a) => !a.duplicate)!.refund;
    expect(await sumRefundsForOrder({ db: database.db, orderId: "ORD-1008" })).toBe(winner.amountCents);
    expect(await sumRefundsForOrder({ db: database.db, orderId: "ORD-1001" })).toBe(0);
  });

  it("queues one reply per thread and returns the queued one after", async () => {
    const first = await queueEmail({
      db: database.db,
      threadId: "t-1",
      to: "a@example.com",
      subject: "S",
      body: "B",
    });
    const again = await queueEmail({
      db: database.db,
      threadId: "t-1",
      to: "a@example.com",
      subject: "S2",
      body: "B2",
    });
    expect(first.duplicate).toBe(false);
    expect(again).toEqual({ email: first.email, duplicate: true });
    expect(await listEmailsForThread({ db: database.db, threadId: "t-1" })).toEqual([first.email]);
  });
});
