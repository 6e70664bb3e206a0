import { readdirSync } from "node:fs";
import { join } from "node:path";
import { agentFor, answer, createTicket, runOnce, sqlFor } from "../api/client";
import { createTestDatabase } from "../support/pg";
import { startTestServer, type TestServer } from "../support/server";

/*
 * Behind a pooler (issue 31), the parts only a pooler tests: run by `npm run test:pooler` (e2e/pooler/run.ts), which
 * starts PgBouncer in transaction mode and points every test server's DATABASE_URL at it. Two servers start at once
 * on an empty database and migrate it once through the pooler (the migration lock is a transaction's, held on a
 * connection of its own); both then serve the same thread in turn. Named prepared statements would break here at the
 * first repeated query; no advisory lock outlives its transaction.
 */
const pooled = Boolean(process.env.TEST_POOLER_PORT);

describe.runIf(pooled)("production behind PgBouncer in transaction mode", () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  const servers: TestServer[] = [];
  beforeAll(async () => {
    db = await createTestDatabase("pooler");
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await db?.drop();
  });

  it("two servers starting at once migrate an empty database once, then serve one ticket between them", async () => {
    const started = await Promise.all([
      startTestServer({ databaseUrl: db.url }),
      startTestServer({ databaseUrl: db.url }),
    ]);
    servers.push(...started);
    const [a, b] = started as [TestServer, TestServer];
    const sql = sqlFor(db.url);
    try {
      const files = readdirSync(join(process.cwd(), "drizzle")).filter((f) => f.endsWith(".sql"));
      const [applied] = await sql.rows<{ n: number }>(
        "SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations",
      );
      expect(applied?.n).toBe(files.length);

      // Filed and started on A, approved on B, sent on A: each server reads what the other wrote, statement by statement
      // on whatever server connection the pooler hands it.
      const message = "My headphones from ORD-1002 are broken, please refund them.";
      const threadId = await createTicket(a.url, message);
      const first = await runOnce(agentFor(a.url, threadId), { message });
      expect(first.interrupts.map((i) => i.reason)).toEqual(["refund_approval"]);
      const approved = await runOnce(agentFor(b.url, threadId), {
        resume: [answer(first.interrupts[0]!, { decision: "approve" })],
      });
      expect(approved.interrupts.map((i) => i.reason)).toEqual(["confirm_email"]);
      const sent = await runOnce(agentFor(a.url, threadId), {
        resume: [answer(approved.interrupts[0]!, { choice: "send" })],
      });
      expect(sent.finished).toBeDefined();
      const [refunds] = await sql.rows<{ n: number }>(
        "SELECT count(*)::int AS n FROM refunds r JOIN threads t ON t.id = r.thread_id WHERE t.id = $1",
        [threadId],
      );
      expect(refunds?.n).toBe(1);
      // Every session-level lock is gone with its transaction: none is held by the servers now.
      const [locks] = await sql.rows<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
      );
      expect(locks?.n).toBe(0);
    } finally {
      await sql.end();
    }
  });
});
