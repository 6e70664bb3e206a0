import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorCodeOf } from "@/lib/contract/errors";
import { migrateDatabase } from "./migrate";
import { type Database, openPglite } from "./open";

/**
 * The embedded database is one connection. A statement issued outside an open transaction by the code that
 * transaction awaits used to hang the whole process (an edited fork did it); now it fails fast with a code, and every
 * other wait is bounded too.
 */
describe("embedded database: no wait without bound", () => {
  let database: Database;

  beforeAll(async () => {
    database = await openPglite("memory://", { waitMs: 1_000, selfWaitMs: 300 });
    await migrateDatabase(database);
  });
  afterAll(async () => {
    await database?.close();
  });

  async function outcome(work: () => Promise<unknown>): Promise<{ code?: string; ms: number }> {
    const started = performance.now();
    try {
      await work();
      return { ms: performance.now() - started };
    } catch (error) {
      return { code: errorCodeOf(error) ?? String(error), ms: performance.now() - started };
    }
  }

  it("a Drizzle read outside the open transaction it is awaited by fails fast with unavailable:database_busy", async () => {
    const result = await outcome(() =>
      database.db.transaction(async (tx) => {
        await tx.execute(sql`SELECT 1`);
        await database.db.execute(sql`SELECT count(*) FROM threads`);
      }),
    );
    expect(result.code).toBe("unavailable:database_busy");
    expect(result.ms).toBeLessThan(2_000);
  });

  it("the same through the raw client the checkpointer uses, and through a nested transaction", async () => {
    const raw = await outcome(() =>
      database.db.transaction(async () => {
        await database.sql.query("SELECT count(*) FROM checkpoint.checkpoints WHERE thread_id = $1", ["t"]);
      }),
    );
    expect(raw.code).toBe("unavailable:database_busy");
    const nested = await outcome(() =>
      database.db.transaction(async () => {
        await database.db.transaction(async (inner) => inner.execute(sql`SELECT 1`));
      }),
    );
    expect(nested.code).toBe("unavailable:database_busy");
    expect(Math.max(raw.ms, nested.ms)).toBeLessThan(2_000);
  });

  it("nothing the refused transaction wrote is kept, and the database serves again at once", async () => {
    const before = await database.sql.query<{ n: number }>("SELECT count(*)::int AS n FROM orders");
    await outcome(() =>
      database.db.transaction(async (tx) => {
        await tx.execute(
          sql`INSERT INTO orders (id, customer_name, customer_email, amount_cents, currency, placed_at, payment_method, items, status)
              VALUES ('ORD-GATE', 'G', 'g@example.com', 100, 'EUR', now(), 'card', '[]'::jsonb, 'delivered')`,
        );
        await database.sql.query("SELECT 1 WHERE $1::int = 1", [1]);
      }),
    );
    const after = await database.sql.query<{ n: number }>("SELECT count(*)::int AS n FROM orders");
    expect(after[0]?.n).toBe(before[0]?.n);
  });

  it("another caller waits its turn behind a transaction, and past the limit gets the same code", async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const transaction = database.db.transaction(async (tx) => {
      await tx.execute(sql`SELECT 1`);
      await held;
    });
    await new Promise((r) => setTimeout(r, 20));
    // Within the limit: it waits, then runs.
    const waiting = database.sql.query<{ one: number }>("SELECT 1 AS one WHERE $1::int = 1", [1]);
    setTimeout(release, 200);
    expect((await waiting)[0]?.one).toBe(1);
    await transaction;

    let releaseLong: () => void = () => {};
    const heldLong = new Promise<void>((resolve) => {
      releaseLong = resolve;
    });
    const long = database.db.transaction(async (tx) => {
      await tx.execute(sql`SELECT 1`);
      await heldLong;
    });
    await new Promise((r) => setTimeout(r, 20));
    const late = await outcome(() => database.sql.query("SELECT 2 WHERE $1::int = 1", [1]));
    expect(late.code).toBe("unavailable:database_busy");
    expect(late.ms).toBeGreaterThanOrEqual(900);
    expect(database.gate?.waiting).toBe(0);
    releaseLong();
    await long;
    expect(await database.sql.query("SELECT 3 AS three WHERE $1::int = 1", [1])).toEqual([{ three: 3 }]);
  });

  it("work started inside a transaction but not awaited by it runs once the transaction ends", async () => {
    let detached: Promise<unknown> | undefined;
    await database.db.transaction(async (tx) => {
      await tx.execute(sql`SELECT 1`);
      detached = new Promise((resolve) => setTimeout(resolve, 0)).then(() =>
        database.sql.query("SELECT 4 AS four WHERE $1::int = 1", [1]),
      );
    });
    expect(await detached).toEqual([{ four: 4 }]);
  });
});
