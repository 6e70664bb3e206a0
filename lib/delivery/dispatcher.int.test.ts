import { randomUUID } from "node:crypto";
import { openBackend } from "@/e2e/support/backends";
import { type FakePaymentProvider, startFakePaymentProvider } from "@/e2e/support/fake-payment";
import { recordApprovedRefund } from "@/e2e/support/receipts";
import { seeded } from "@/e2e/support/seeded";
import { startTestSmtpServer, type TestSmtpServer } from "@/e2e/support/smtp";
import { EFFECT_TASK_ACTIONS, type EffectTaskAction } from "@/lib/contract/wire";
import type { Database } from "@/lib/db/open";
import { getEffect } from "@/lib/db/queries/effects";
import { registerInstance } from "@/lib/db/queries/instances";
import { queueEmail } from "@/lib/db/queries/outbox";
import { instanceLabels } from "@/lib/platform/instance";
import { actOnEffectTask, toEffectView } from "@/lib/runtime/views/effects";
import { seedDemoOrders } from "@/lib/shop/demo-orders";
import type { EffectConnector } from "./connector";
import { emailConnector } from "./connectors/email";
import { httpPaymentGateway, paymentConnector } from "./connectors/payment";
import { backoffMs, dispatchDueEffects, type RetryPolicy } from "./dispatcher";

const FAST: RetryPolicy = { maxAttempts: 20, baseMs: 10, maxMs: 80 };

describe("effect dispatcher against a fake payment provider and a real SMTP server", () => {
  let backend: Awaited<ReturnType<typeof openBackend>>;
  let database: Database;
  let provider: FakePaymentProvider;
  let smtp: TestSmtpServer;
  let connectors: Map<string, EffectConnector>;

  beforeAll(async () => {
    backend = await openBackend("postgres");
    database = backend.database;
    await seedDemoOrders({ db: database.db });
    provider = await startFakePaymentProvider({ random: seeded(11) });
    smtp = await startTestSmtpServer({ random: seeded(12) });
    connectors = new Map(
      [
        paymentConnector(httpPaymentGateway({ baseUrl: provider.url, timeoutMs: 300 })),
        emailConnector({ from: "Shop <shop@example.com>", transport: { smtpUrl: smtp.url } }),
      ].map((c) => [c.kind, c]),
    );
  });
  afterAll(async () => {
    await provider?.close();
    await smtp?.close();
    await backend?.close();
  });

  const effects = (where = "true") =>
    database.sql.query<{
      id: string;
      kind: string;
      idempotency_key: string;
      status: string;
      attempts: number;
      provider_ref: string | null;
      last_error: string | null;
    }>(`SELECT * FROM effects WHERE ${where} ORDER BY created_at`);

  /** An instance of this machine whose process is gone (a pid no process has): what a crashed server leaves. */
  async function deadInstance(pid: number): Promise<string> {
    const id = randomUUID();
    await registerInstance({ db: database.db, instance: { ...instanceLabels(), id, pid } });
    return id;
  }

  /** Dispatch until nothing is queued or sending (or the deadline passes). */
  async function drain(owner: string, retry = FAST, deadlineMs = 60_000) {
    const deadline = Date.now() + deadlineMs;
    for (;;) {
      await dispatchDueEffects({ db: database.db, connectors, owner, retry });
      const [open] = await database.sql.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM effects WHERE status IN ('queued', 'sending')",
      );
      if (open?.n === 0 || Date.now() > deadline) return;
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it("backs off exponentially with jitter, capped", () => {
    const policy = { maxAttempts: 5, baseMs: 1000, maxMs: 8000 };
    expect(backoffMs(1, policy, () => 0)).toBe(500);
    expect(backoffMs(1, policy, () => 1)).toBe(1000);
    expect(backoffMs(3, policy, () => 1)).toBe(4000);
    expect(backoffMs(10, policy, () => 1)).toBe(8000);
  });

  it("delivers 30 payments and 10 emails exactly once each through 20 % 500s, 10 % timeouts after applying, 5 % drops", async () => {
    provider.setFaults({ error500: 0.2, timeoutAfterApply: 0.1, drop: 0.05 });
    smtp.setFaults({ rejectRcpt451: 0.1, reject451: 0.1, refuseConnection: 0.05 });
    for (let i = 0; i < 30; i++) {
      const recorded = await recordApprovedRefund({
        db: database.db,
        decisionRef: `fault-decision-${i}`,
        orderId: "ORD-1008",
        threadId: "fault-thread",
        amountCents: 1000,
        currency: "EUR",
        method: "original_payment",
      });
      expect(recorded.ok).toBe(true);
    }
    for (let i = 0; i < 10; i++) {
      await queueEmail({
        db: database.db,
        decisionRef: `fault-confirm-${i}`,
        threadId: "fault-thread",
        to: `customer${i}@example.com`,
        subject: `Reply ${i}`,
        body: "Hello",
      });
    }
    await drain("dispatcher-a");

    const rows = await effects("thread_id = 'fault-thread'");
    expect(rows.filter((r) => r.status === "delivered")).toHaveLength(40);
    // Provider side: every payment key created once; the provider's id is what the effect recorded.
    const payments = rows.filter((r) => r.kind === "payment");
    const createdKeys = provider.created.map((c) => c.key);
    expect(createdKeys.sort()).toEqual(payments.map((p) => p.idempotency_key).sort());
    for (const p of payments) {
      expect(p.provider_ref).toBe(provider.created.find((c) => c.key === p.idempotency_key)?.id);
    }
    // SMTP side: every email received once.
    const mails = rows.filter((r) => r.kind === "email");
    expect(smtp.received.map((m) => m.effectKey).sort()).toEqual(mails.map((m) => m.idempotency_key).sort());
    // The faults did happen, and the timeouts were reconciled by looking the key up.
    expect(provider.outcomes.timeout ?? 0).toBeGreaterThan(0);
    expect(provider.outcomes["500"] ?? 0).toBeGreaterThan(0);
    expect(provider.outcomes.found ?? 0).toBeGreaterThan(0);
    expect(rows.some((r) => r.attempts > 1)).toBe(true);
    provider.setFaults({});
    smtp.setFaults({});
  });

  it("takes over an effect a dead dispatcher left sending, and reconciles it instead of paying twice", async () => {
    const recorded = await recordApprovedRefund({
      db: database.db,
      decisionRef: "crash-decision",
      orderId: "ORD-1001",
      threadId: "crash-thread",
      amountCents: 500,
      currency: "EUR",
      method: "original_payment",
    });
    if (!recorded.ok) throw new Error("not recorded");
    // The dead dispatcher got as far as the provider, then died before recording the outcome.
    const res = await fetch(`${provider.url}/refunds`, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": recorded.effect.idempotencyKey },
      body: JSON.stringify({ amount_cents: 500, order_id: "ORD-1001" }),
    });
    const applied = (await res.json()) as { id: string };
    const before = provider.created.length;
    await database.sql.query(
      "UPDATE effects SET status = 'sending', attempts = 1, owner = $1, lease_expires_at = now() + interval '1 hour' WHERE id = $2",
      [await deadInstance(999_999), recorded.effect.id],
    );
    await drain("dispatcher-b");
    const [row] = await effects(`id = '${recorded.effect.id}'`);
    expect(row).toMatchObject({ status: "delivered", attempts: 2, provider_ref: applied.id });
    expect(provider.created.length).toBe(before);
  });

  it("an email whose dispatcher died after handing it to the SMTP server is unconfirmed (not resent, not called delivered) until an operator acts; one that died before is sent", async () => {
    const queue = (ref: string) =>
      queueEmail({
        db: database.db,
        decisionRef: ref,
        threadId: "handover-thread",
        to: `${ref}@example.com`,
        subject: ref,
        body: "Hello",
      });
    const after = await queue("died-after");
    const before = await queue("died-before");
    const dead = await deadInstance(999_998);
    // "died-after" reached the DATA terminator (the mark is written right before it); "died-before" did not.
    await database.sql.query(
      "UPDATE effects SET status = 'sending', attempts = 1, owner = $1, provider_ref = $2 WHERE id = $3",
      [dead, `handed-over:<${after.effect.id}@hitl-console.local>`, after.effect.id],
    );
    await database.sql.query(
      "UPDATE effects SET status = 'sending', attempts = 1, owner = $1 WHERE id = $2",
      [dead, before.effect.id],
    );
    await drain("dispatcher-d");
    const rows = await effects("thread_id = 'handover-thread'");
    expect(rows.map((r) => r.status)).toEqual(["unconfirmed", "delivered"]);
    // What to look for in the mail server's log, and why nobody can tell.
    expect(rows[0]?.provider_ref).toBe(`<${after.effect.id}@hitl-console.local>`);
    expect(rows[0]?.last_error).toMatch(/may or may not have arrived/);
    const sentTo = (who: string) => smtp.received.filter((m) => m.to.includes(`${who}@example.com`)).length;
    expect(sentTo("died-after")).toBe(0);
    expect(sentTo("died-before")).toBe(1);
    // An open operator task; the dispatcher leaves it alone, however often it runs.
    const operator = { kind: "user", id: "u-2", label: "olga@example.com", role: "operator" } as const;
    const unconfirmed = await getEffect({ db: database.db, effectId: after.effect.id });
    expect(unconfirmed && toEffectView(unconfirmed).task).toMatchObject({
      open: true,
      actions: ["retry", "confirmed_delivered", "mark_handled"],
    });
    await drain("dispatcher-d");
    expect(sentTo("died-after")).toBe(0);
    const audit = await database.sql.query<{ detail: { unconfirmed?: boolean } }>(
      "SELECT detail FROM audit_log WHERE action = 'effect_failed' AND detail ->> 'effectId' = $1",
      [after.effect.id],
    );
    expect(audit.map((r) => r.detail.unconfirmed)).toEqual([true]);
    // The operator learns it did not arrive and sends it again: exactly one email, then delivered.
    await actOnEffectTask({
      db: database.db,
      threadId: "handover-thread",
      effectId: after.effect.id,
      action: "retry",
      principal: operator,
    });
    await drain("dispatcher-d");
    expect(sentTo("died-after")).toBe(1);
    const [resent] = await effects(`id = '${after.effect.id}'`);
    expect(resent?.status).toBe("delivered");
    expect(resent?.provider_ref).not.toMatch(/^handed-over:/);
    // A live send marks the hand-over on its way and ends with the server's acceptance recorded instead.
    const fresh = await queue("live");
    await drain("dispatcher-d");
    const [live] = await effects(`id = '${fresh.effect.id}'`);
    expect(live?.status).toBe("delivered");
    expect(live?.provider_ref).not.toMatch(/^handed-over:/);
  });

  it("an operator's answer to a task is judged against the effect's kind and status: only an unconfirmed email can be confirmed delivered, and a refused answer changes nothing", async () => {
    const operator = { kind: "user", id: "u-3", label: "omar@example.com", role: "operator" } as const;
    // Written out, not derived from the code under test: kind × status → the answers an operator may give.
    const allowed: Record<string, readonly EffectTaskAction[]> = {
      "payment/failed": ["retry", "refunded_manually", "mark_handled"],
      "payment/unconfirmed": ["retry", "refunded_manually", "mark_handled"],
      "email/failed": ["retry", "mark_handled"],
      "email/unconfirmed": ["retry", "confirmed_delivered", "mark_handled"],
    };
    let n = 0;
    const make = async (kind: "payment" | "email", status: "failed" | "unconfirmed") => {
      n += 1;
      const threadId = `matrix-${n}`;
      const effectId =
        kind === "email"
          ? (
              await queueEmail({
                db: database.db,
                decisionRef: `matrix-${n}`,
                threadId,
                to: `matrix-${n}@example.com`,
                subject: "matrix",
                body: "Hello",
              })
            ).effect.id
          : await (async () => {
              const recorded = await recordApprovedRefund({
                db: database.db,
                decisionRef: `matrix-${n}`,
                orderId: "ORD-1001",
                threadId,
                amountCents: 1,
                currency: "EUR",
                method: "original_payment",
              });
              if (!recorded.ok) throw new Error(`not recorded: ${JSON.stringify(recorded)}`);
              return recorded.effect.id;
            })();
      await database.sql.query(
        "UPDATE effects SET status = $1, attempts = 2, last_error = 'x' WHERE id = $2",
        [status, effectId],
      );
      return { threadId, effectId };
    };
    for (const [key, actions] of Object.entries(allowed)) {
      const [kind, status] = key.split("/") as ["payment" | "email", "failed" | "unconfirmed"];
      for (const action of EFFECT_TASK_ACTIONS) {
        const { threadId, effectId } = await make(kind, status);
        const offered = await getEffect({ db: database.db, effectId });
        expect(offered && toEffectView(offered).task?.actions, key).toEqual(actions);
        const answer = actOnEffectTask({ db: database.db, threadId, effectId, action, principal: operator });
        if (actions.includes(action)) {
          await expect(answer, `${key} ${action}`).resolves.toMatchObject({
            status: action === "retry" ? "queued" : "handled",
            task: { open: false, resolution: action },
          });
        } else {
          await expect(answer, `${key} ${action}`).rejects.toMatchObject({ code: "bad_request:effect_task" });
          const [row] = await effects(`id = '${effectId}'`);
          expect(row, `${key} ${action}`).toMatchObject({ status, attempts: 2 });
          const audit = await database.sql.query("SELECT 1 FROM audit_log WHERE thread_id = $1", [threadId]);
          expect(audit).toHaveLength(0);
        }
      }
    }
    // An email confirmed delivered is closed as having arrived, and is never sent again.
    const { threadId, effectId } = await make("email", "unconfirmed");
    await actOnEffectTask({
      db: database.db,
      threadId,
      effectId,
      action: "confirmed_delivered",
      principal: operator,
    });
    await drain("dispatcher-m");
    expect(smtp.received.filter((m) => m.to.includes(`matrix-${n}@example.com`))).toHaveLength(0);
  });

  it("out of attempts: failed with its last error, an audit entry and an operator task; a retry delivers it", async () => {
    provider.setFaults({ down: true });
    const recorded = await recordApprovedRefund({
      db: database.db,
      decisionRef: "down-decision",
      orderId: "ORD-1003",
      threadId: "down-thread",
      amountCents: 700,
      currency: "EUR",
      method: "original_payment",
    });
    if (!recorded.ok) throw new Error("not recorded");
    await drain("dispatcher-c", { maxAttempts: 3, baseMs: 10, maxMs: 20 });
    const [failed] = await effects(`id = '${recorded.effect.id}'`);
    expect(failed).toMatchObject({ status: "failed", attempts: 3 });
    expect(failed?.last_error).toMatch(/HTTP 500: injected failure/);
    const audit = await database.sql.query<{ action: string; actor_id: string }>(
      "SELECT action, actor_id FROM audit_log WHERE thread_id = 'down-thread'",
    );
    expect(audit).toEqual([{ action: "effect_failed", actor_id: "system:dispatcher" }]);

    provider.setFaults({});
    const principal = { kind: "user", id: "u-1", label: "operator@example.com", role: "operator" } as const;
    const view = await actOnEffectTask({
      db: database.db,
      threadId: "down-thread",
      effectId: recorded.effect.id,
      action: "retry",
      principal,
    });
    expect(view).toMatchObject({ status: "queued", attempts: 0, task: { open: false, resolution: "retry" } });
    // The task is no longer open: a second operator's answer is refused.
    await expect(
      actOnEffectTask({
        db: database.db,
        threadId: "down-thread",
        effectId: recorded.effect.id,
        action: "mark_handled",
        principal,
      }),
    ).rejects.toMatchObject({ code: "conflict:effect_task" });
    await drain("dispatcher-c");
    const [delivered] = await effects(`id = '${recorded.effect.id}'`);
    expect(delivered).toMatchObject({ status: "delivered", attempts: 1 });
    expect(provider.created.filter((c) => c.key === recorded.effect.idempotencyKey)).toHaveLength(1);
    const trail = await database.sql.query<{ action: string }>(
      "SELECT action FROM audit_log WHERE thread_id = 'down-thread' ORDER BY id",
    );
    expect(trail.map((t) => t.action)).toEqual(["effect_failed", "effect_task"]);
  });
});
