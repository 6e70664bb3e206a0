import pg from "pg";
import { startTestSmtpServer, type TestSmtpServer } from "../support/smtp";
import { agentFor, createTicket, runOnce } from "./client";
import { customerAccount } from "./sealed";
import { cleanUp, prepareDatabase, startTestServer, until } from "./setup";
import { postDecision, settledView } from "./thread-api";

/*
 * Issue 29: an account change whose server is killed in the middle of applying it. Both reviews approve; the
 * `account_update` effect is claimed and its connector is inside its transaction — held there by a lock this test
 * takes on `customer_accounts` — when the server is SIGKILLed. A second server takes the dead one's claim over and
 * applies it: the account changes once, and the customer gets one "updated" email, counted at a real SMTP server.
 */

type View = {
  status: string;
  activeRunId: string | null;
  pendingInterrupts: { interruptId: string; payload: { review?: string } }[];
};

describe("an account change killed mid-effect", () => {
  let prepared: Awaited<ReturnType<typeof prepareDatabase>>;
  let smtp: TestSmtpServer;
  const servers: Awaited<ReturnType<typeof startTestServer>>[] = [];
  beforeAll(async () => {
    prepared = await prepareDatabase("account_kill");
    smtp = await startTestSmtpServer();
  });
  afterAll(async () => {
    await cleanUp(servers, prepared);
    await smtp?.close();
  });

  it("is applied once, by the next server, and the customer is told once", async () => {
    const env = { SMTP_URL: smtp.url, EFFECT_POLL_MS: "100", EFFECT_LEASE_MS: "1500" };
    const first = await startTestServer({ databaseUrl: prepared.url, env });
    servers.push(first);
    const message = "Please change my payout account to DE89 3704 0044 0532 0130 00.";
    const threadId = await createTicket(first.url, message, "ORD-1003", "account_change");
    await runOnce(agentFor(first.url, threadId), { message, as: "intake" });
    const paused = await settledView<View>(first.url, threadId);
    const review = (kind: string) =>
      paused.pendingInterrupts.find((p) => p.payload.review === kind)?.interruptId;

    // The test holds the accounts table: the connector can claim the effect but not finish applying it.
    const lock = new pg.Client({ connectionString: prepared.url });
    await lock.connect();
    try {
      await lock.query("BEGIN");
      await lock.query("LOCK TABLE customer_accounts IN SHARE MODE");
      for (const [kind, who] of [
        ["fraud", "supervisor"],
        ["data", "operator"],
      ] as const) {
        const res = await postDecision(
          first.url,
          threadId,
          review(kind) as string,
          { decision: "approve" },
          who,
        );
        expect(res.status, await res.text()).toBeLessThan(300);
      }
      await until("the account change claimed and being applied", async () => {
        const [row] = await prepared.sql.rows<{ status: string }>(
          "SELECT status FROM effects WHERE thread_id = $1 AND kind = 'account_update'",
          [threadId],
        );
        return row?.status === "sending";
      });
      await first.kill();
    } finally {
      await lock.query("ROLLBACK").catch(() => {});
      await lock.end();
    }

    const second = await startTestServer({ databaseUrl: prepared.url, env });
    servers.push(second);
    await until(
      "the account change applied and its email delivered",
      async () => {
        const rows = await prepared.sql.rows<{ kind: string; status: string }>(
          "SELECT kind, status FROM effects WHERE thread_id = $1",
          [threadId],
        );
        return rows.length === 2 && rows.every((r) => r.status === "delivered");
      },
      60_000,
    );
    const account = await customerAccount(prepared.sql, "sofia.rossi@example.com");
    expect(account?.payout).toBe("DE89 3704 0044 0532 0130 00");
    const applied = await prepared.sql.rows<{ applied_at: string | null }>(
      "SELECT applied_at FROM account_changes WHERE thread_id = $1",
      [threadId],
    );
    expect(applied.filter((a) => a.applied_at !== null)).toHaveLength(1);
    const effect = await prepared.sql.rows<{ attempts: number }>(
      "SELECT attempts FROM effects WHERE thread_id = $1 AND kind = 'account_update'",
      [threadId],
    );
    // The dead server's attempt, then the one that applied it.
    expect(effect[0]?.attempts).toBeGreaterThanOrEqual(2);
    // One "updated" email, at the SMTP server.
    const told = smtp.received.filter(
      (m) => m.to.includes("sofia.rossi@example.com") && m.subject === "Your payout account",
    );
    expect(told).toHaveLength(1);
    expect(told[0]?.raw).toContain("has been updated as you asked");
  }, 180_000);
});
