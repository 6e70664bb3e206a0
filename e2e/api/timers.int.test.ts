import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Interrupt } from "@ag-ui/core";
import { openThreadJson } from "@/lib/db/vault";
import { authedFetch } from "../support/auth";
import { startTestServer, type TestServer } from "../support/server";
import { startTestSmtpServer, type TestSmtpServer } from "../support/smtp";
import { agentFor, createTicket, payloadOf, runOnce } from "./client";
import { cleanUp, prepareDatabase, until } from "./setup";
import { postDecision, threadView } from "./thread-api";

/*
 * Durable timers (issue 32): a graph waits for a duration and goes on when it is over, once — across a restart and
 * across two instances. The account-change agent's cooling-off is the timer: after both reviews approve a new payout
 * account, the change waits 2 s (here) on a `wait_timer` question nobody has to answer; the deadline sweeper of
 * whichever instance gets there answers it `fired` as system:timer, and the change is made. Counted where it lands:
 * the customer's account, the emails the SMTP server received, the ledger and the audit trail.
 */

const COOL_OFF_MS = 2000;
const ENV = {
  ACCOUNT_CHANGE_COOLOFF_MS: String(COOL_OFF_MS),
  DEADLINE_SWEEP_MS: "100",
  EFFECT_POLL_MS: "100",
};
const IBAN = "DE89 3704 0044 0532 0130 00";

interface View {
  status: string;
  activeRunId: string | null;
  pendingInterrupts: { interruptId: string; action: string; payload: Record<string, unknown> }[];
  values: { outcome?: { status: string; reasons: string[] } | null };
}

const view = (base: string, threadId: string) => threadView<View>(base, threadId);
const decide = postDecision;

/** A payout change for ORD-1001's customer, both reviews approved: the thread then waits on its cooling-off timer. */
async function coolingOff(base: string): Promise<{ threadId: string; timerId: string }> {
  const message = `Please change my payout account to ${IBAN}.`;
  const threadId = await createTicket(base, message, "ORD-1001", "account_change");
  const first = await runOnce(agentFor(base, threadId), { message, as: "intake" });
  const review = (kind: string) =>
    first.interrupts.find((i) => (payloadOf(i) as { review?: string }).review === kind) as Interrupt;
  // The first answer waits for the other (200); the second resumes the run (202).
  expect(
    (await decide(base, threadId, review("fraud").id, { decision: "approve" }, "supervisor")).status,
  ).toBe(200);
  expect((await decide(base, threadId, review("data").id, { decision: "approve" }, "operator")).status).toBe(
    202,
  );
  const waiting = await until("the cooling-off timer", async () => {
    const v = await view(base, threadId);
    return v.activeRunId === null && v.pendingInterrupts[0]?.action === "wait_timer" ? v : undefined;
  });
  expect(waiting.pendingInterrupts).toHaveLength(1);
  expect(waiting.pendingInterrupts[0]?.payload).toMatchObject({
    action: "wait_timer",
    durationMs: COOL_OFF_MS,
  });
  return { threadId, timerId: waiting.pendingInterrupts[0]?.interruptId as string };
}

/** Emails the SMTP server received for this customer's account change. */
const accountMails = (smtp: TestSmtpServer) =>
  smtp.received.filter((m) => m.to.includes("anna.schmidt@example.com") && /payout/i.test(m.subject ?? ""));

describe("durable timers on Postgres: two instances, one killed and one restarted while the timer waits", () => {
  let prepared: Awaited<ReturnType<typeof prepareDatabase>>;
  let smtp: TestSmtpServer;
  const servers: TestServer[] = [];
  beforeAll(async () => {
    prepared = await prepareDatabase("timers");
    smtp = await startTestSmtpServer();
    for (let i = 0; i < 2; i += 1) {
      servers.push(await startTestServer({ databaseUrl: prepared.url, env: { ...ENV, SMTP_URL: smtp.url } }));
    }
  });
  afterAll(async () => {
    await cleanUp(servers, prepared);
    await smtp?.close();
  });

  test("fires once, when its time is up, on whichever instance is there; the change is made once", async () => {
    const [a, b] = servers as [TestServer, TestServer];
    const { threadId, timerId } = await coolingOff(a.url);
    const [asked] = await prepared.sql.rows<{ due_ms: number; expiry_answer: unknown }>(
      "SELECT (extract(epoch FROM due_at - created_at) * 1000)::int AS due_ms, expiry_answer FROM decisions WHERE interrupt_id = $1",
      [timerId],
    );
    // Due when its own duration is up (not the SLA's day), and never escalated to anyone.
    expect(asked).toEqual({ due_ms: COOL_OFF_MS, expiry_answer: null });

    // The instance that ran the thread dies; another starts on the same database (a restart) while the timer waits.
    await a.kill();
    servers.push(await startTestServer({ databaseUrl: prepared.url, env: { ...ENV, SMTP_URL: smtp.url } }));

    const done = await until(
      "the change to be made",
      async () => {
        const v = await view(b.url, threadId);
        return v.status === "completed" ? v : undefined;
      },
      30_000,
    );
    expect(done.values.outcome).toMatchObject({ status: "applied" });
    await until("the confirmation email", () => accountMails(smtp).length >= 1, 20_000);
    // Give a second firing every chance to happen (several sweeps of both live instances), then count.
    await new Promise((r) => setTimeout(r, 1500));

    const [ledger] = await prepared.sql.rows<{ status: string; resolved_by: string; waited_ms: number }>(
      `SELECT status, resolved_by, (extract(epoch FROM resolved_at - created_at) * 1000)::int AS waited_ms
         FROM decisions WHERE interrupt_id = $1`,
      [timerId],
    );
    expect(ledger).toMatchObject({ status: "resolved", resolved_by: "system:timer" });
    expect(ledger?.waited_ms).toBeGreaterThanOrEqual(COOL_OFF_MS);
    const audit = await prepared.sql.rows(
      "SELECT actor_id FROM audit_log WHERE interrupt_id = $1 AND action = 'decision'",
      [timerId],
    );
    expect(audit).toHaveLength(1);
    // Runs' inputs are sealed under the thread's key: opened as the server opens them.
    const inputs = await Promise.all(
      (
        await prepared.sql.rows<{ input: unknown }>(
          "SELECT input FROM runs WHERE thread_id = $1 AND kind = 'resume'",
          [threadId],
        )
      ).map(async (r) => JSON.stringify(await openThreadJson(prepared.sql, threadId, r.input))),
    );
    expect(inputs.filter((input) => input.includes(timerId))).toHaveLength(1);
    // The outside world: the account changed once, and the customer got one email about it.
    expect(
      await prepared.sql.count("account_changes", "thread_id = $1 AND applied_at IS NOT NULL", [threadId]),
    ).toBe(1);
    expect(accountMails(smtp)).toHaveLength(1);
  });

  test("a person may cancel the wait (nothing is changed); firing it early takes a supervisor", async () => {
    const b = servers[1] as TestServer;
    const { threadId, timerId } = await coolingOff(b.url);
    const early = await decide(b.url, threadId, timerId, { outcome: "fired" }, "operator");
    expect(early.status).toBe(403);
    expect(((await early.json()) as { code: string }).code).toBe("forbidden:cool_off_early");
    const bad = await decide(b.url, threadId, timerId, { outcome: "cancelled", note: " " }, "operator");
    expect(bad.status).toBe(422);
    const cancel = { outcome: "cancelled", note: "The customer called: this was not them." };
    expect((await decide(b.url, threadId, timerId, cancel, "operator")).status).toBe(202);
    const done = await until("the thread to end", async () => {
      const v = await view(b.url, threadId);
      return v.status === "completed" ? v : undefined;
    });
    expect(done.values.outcome).toMatchObject({
      status: "rejected",
      reasons: [`Cancelled during the cooling-off period: ${cancel.note}`],
    });
    expect(await prepared.sql.count("account_changes", "thread_id = $1", [threadId])).toBe(0);
    // Past its due time the cancelled timer is not fired by anyone.
    await new Promise((r) => setTimeout(r, COOL_OFF_MS + 500));
    const [row] = await prepared.sql.rows<{ resolved_by: string }>(
      "SELECT resolved_by FROM decisions WHERE interrupt_id = $1",
      [timerId],
    );
    expect(row?.resolved_by).toMatch(/^operator@/);
  });
});

describe("durable timers on the embedded database: the server restarts while the timer waits", () => {
  const dir = mkdtempSync(join(tmpdir(), "hitl-timers-"));
  const start = () =>
    startTestServer({
      databaseUrl: `pglite:${dir}`,
      env: { DATABASE_URL: "", PGLITE_DATA_DIR: join(dir, "db"), ...ENV },
    });
  let server: TestServer | undefined;
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test("fires once after the restart, and the change is made", async () => {
    server = await start();
    const { threadId, timerId } = await coolingOff(server.url);
    await server.stop();
    server = await start();
    const done = await until(
      "the change to be made",
      async () => {
        const v = await view((server as TestServer).url, threadId);
        return v.status === "completed" ? v : undefined;
      },
      30_000,
    );
    expect(done.values.outcome).toMatchObject({ status: "applied" });
    const history = (await (
      await authedFetch(`${server.url}/api/audit?action=decision&threadId=${threadId}`, {}, "viewer")
    ).json()) as { items: { actor: string; interruptId: string; answer: unknown }[] };
    expect(history.items.filter((i) => i.interruptId === timerId)).toEqual([
      expect.objectContaining({ actor: "system:timer", answer: { outcome: "fired" } }),
    ]);
  });
});
