import { createServer } from "node:net";
import { sql as dsql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/node-postgres";
import fc from "fast-check";
import pg from "pg";
import { createTestDatabase } from "@/e2e/support/pg";
import { startTcpProxy } from "@/e2e/support/tcp-proxy";
import { databaseFault } from "./database-faults";
import { errorResponse } from "./http/error-response";

/*
 * Each fault below the app as the real driver reports it — refused and cut connections, a server terminating its
 * backends (a failover's old primary), no connection slot left, a read-only standby, a statement or a lock past its
 * limit, no pooled connection free — is told apart by its codes and answered 503 with a stable code, never 500.
 * Everything else a database says stays a 500 (a bug to look at, not an outage to wait out).
 */

const caught = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error("expected the database to refuse");
    },
    (e: unknown) => e,
  );

async function answered(error: unknown) {
  const response = errorResponse(error, "faults.test");
  return {
    status: response.status,
    retryAfter: response.headers.get("retry-after"),
    body: (await response.json()) as { code: string; details?: { reason?: string } },
  };
}

describe("database faults", () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let admin: pg.Client;

  beforeAll(async () => {
    db = await createTestDatabase("faults");
    admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    await admin.query("CREATE TABLE things (id int PRIMARY KEY)");
    await admin.query("INSERT INTO things VALUES (1)");
  });
  afterAll(async () => {
    await admin?.end();
    await db?.drop();
  });

  it("a refused connection (nothing listens) is unavailable:database, with Retry-After", async () => {
    const closed = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, "127.0.0.1", () => {
        const port = (s.address() as { port: number }).port;
        s.close(() => resolve(port));
      });
    });
    const url = new URL(db.url);
    url.port = String(closed);
    const client = new pg.Client({ connectionString: url.toString() });
    const error = await caught(client.connect());
    expect(databaseFault(error)).toEqual({ kind: "unavailable", reason: "unreachable" });
    const res = await answered(error);
    expect(res.status).toBe(503);
    expect(res.body.code).toBe("unavailable:database");
    expect(res.retryAfter).toBe("2");
  });

  it("a connection cut mid-statement (the address moved, the host died) is unavailable:database", async () => {
    const target = new URL(db.url);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    proxy.forward();
    const client = new pg.Client({ connectionString: proxy.urlFor(db.url) });
    client.on("error", () => {});
    await client.connect();
    const running = caught(client.query("SELECT pg_sleep(5)"));
    await new Promise((r) => setTimeout(r, 200));
    proxy.refuse();
    const error = await running;
    expect(databaseFault(error)?.kind).toBe("unavailable");
    expect((await answered(error)).status).toBe(503);
    // The same client afterwards: not queryable, still a fault of the connection.
    const after = await caught(client.query("SELECT 1"));
    expect(databaseFault(after)?.kind).toBe("unavailable");
    await client.end().catch(() => {});
    await proxy.close();
  });

  it("a backend terminated by the server (an immediate shutdown, an operator's kill) is unavailable:database", async () => {
    const client = new pg.Client({ connectionString: db.url });
    client.on("error", () => {});
    await client.connect();
    const pid = (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]?.pid;
    const running = caught(client.query("SELECT pg_sleep(5)"));
    await new Promise((r) => setTimeout(r, 100));
    await admin.query("SELECT pg_terminate_backend($1)", [pid]);
    const error = await running;
    expect((error as { code?: string }).code).toBe("57P01");
    expect(databaseFault(error)).toEqual({ kind: "unavailable", reason: "shutting_down" });
    expect((await answered(error)).body.code).toBe("unavailable:database");
    await client.end().catch(() => {});
  });

  it("no connection slot left is unavailable:database (too_many_connections)", async () => {
    const role = `limited_${Date.now().toString(36)}`;
    await admin.query(`CREATE ROLE ${role} LOGIN CONNECTION LIMIT 1`);
    const url = new URL(db.url);
    url.username = role;
    const first = new pg.Client({ connectionString: url.toString() });
    await first.connect();
    const second = new pg.Client({ connectionString: url.toString() });
    const error = await caught(second.connect());
    expect((error as { code?: string }).code).toBe("53300");
    const res = await answered(error);
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({
      code: "unavailable:database",
      details: { reason: "too_many_connections" },
    });
    await first.end();
    await admin.query(`DROP ROLE ${role}`);
  });

  it("a write the server refuses as read-only (the address still points at a standby) is unavailable:database", async () => {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    await client.query("SET default_transaction_read_only = on");
    const error = await caught(client.query("INSERT INTO things VALUES (2)"));
    expect((error as { code?: string }).code).toBe("25006");
    expect((await answered(error)).body).toMatchObject({
      code: "unavailable:database",
      details: { reason: "read_only" },
    });
    await client.end();
  });

  it("a row lock that never returns ends at the statement or lock limit: unavailable:database_busy, through Drizzle too", async () => {
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    await holder.query("BEGIN");
    await holder.query("SELECT * FROM things WHERE id = 1 FOR UPDATE");
    const pool = new pg.Pool({ connectionString: db.url, max: 2, statement_timeout: 300 });
    const orm = drizzle(pool);
    const statement = await caught(orm.execute(dsql`SELECT * FROM things WHERE id = 1 FOR UPDATE`));
    // Drizzle wraps the driver's error: the code is read through its cause.
    expect(databaseFault(statement)).toEqual({ kind: "busy", reason: "statement_timeout" });
    const res = await answered(statement);
    expect(res.status).toBe(503);
    expect(res.body.code).toBe("unavailable:database_busy");
    const lockClient = await pool.connect();
    await lockClient.query("SET lock_timeout = 100");
    const lock = await caught(lockClient.query("SELECT * FROM things WHERE id = 1 FOR UPDATE"));
    lockClient.release();
    expect(databaseFault(lock)).toEqual({ kind: "busy", reason: "lock_timeout" });
    expect((await answered(lock)).body.code).toBe("unavailable:database_busy");
    await holder.query("ROLLBACK");
    await holder.end();
    await pool.end();
  });

  it("no pooled connection free within the wait is unavailable:database_busy", async () => {
    const pool = new pg.Pool({ connectionString: db.url, max: 1, connectionTimeoutMillis: 150 });
    const held = await pool.connect();
    const error = await caught(pool.query("SELECT 1"));
    expect(databaseFault(error)).toEqual({ kind: "busy", reason: "pool" });
    expect((await answered(error)).body.code).toBe("unavailable:database_busy");
    held.release();
    await pool.end();
  });

  it("every other error the database raises stays a 500 — generated SQLSTATEs outside the fault classes", async () => {
    // What a request can cause (a constraint, a syntax error, a type error…) is a bug to look at, not an outage.
    const unique = await caught(admin.query("INSERT INTO things VALUES (1)"));
    expect(databaseFault(unique)).toBeNull();
    expect((await answered(unique)).status).toBe(500);
    const faultCodes = new Set([
      "57014",
      "55P03",
      "57P01",
      "57P02",
      "57P03",
      "57P05",
      "53300",
      "53400",
      "25006",
      "08000",
      "08001",
      "08003",
      "08004",
      "08006",
    ]);
    const sqlstate = fc
      .stringMatching(/^[0-9A-Z]{5}$/)
      .filter((c) => !faultCodes.has(c) && !c.startsWith("E"));
    await fc.assert(
      fc.asyncProperty(sqlstate, fc.string({ maxLength: 60 }), async (code, words) => {
        fc.pre(!/terminated|not queryable|connections|crashed|connect|shutting|timeout/i.test(words));
        const error = Object.assign(new Error(words), { code });
        expect(databaseFault(error)).toBeNull();
        expect(databaseFault(new Error("wrapped", { cause: error }))).toBeNull();
        expect((await answered(error)).status).toBe(500);
      }),
      { numRuns: 200 },
    );
  });
});
