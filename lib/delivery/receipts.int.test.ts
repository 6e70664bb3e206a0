import { spawnSync } from "node:child_process";
import { type Backend, openBackend } from "@/e2e/support/backends";
import { type FakePaymentProvider, startFakePaymentProvider } from "@/e2e/support/fake-payment";
import { recordApproval } from "@/e2e/support/receipts";
import type { EffectConnector } from "@/lib/delivery/connector";
import { httpPaymentGateway, paymentConnector } from "@/lib/delivery/connectors/payment";
import { dispatchDueEffects, type RetryPolicy } from "@/lib/delivery/dispatcher";
import { recordAccountChange } from "@/lib/shop/accounts";
import { seedDemoOrders } from "@/lib/shop/demo-orders";
import { recordRefund } from "@/lib/shop/refunds";
import { verifyReceipts } from "./receipts";

/*
 * Decision receipts below every agent (issue 50): an effect that moves money or changes an account is recorded only
 * against a decision receipt that authorized exactly it, and delivered only if that receipt still verifies and still
 * matches. Checked against a fake payment provider over real HTTP, counting what it received, on both databases.
 */
const FAST: RetryPolicy = { maxAttempts: 3, baseMs: 10, maxMs: 20 };

describe.each<Backend>(["postgres", "pglite"])("decision receipts on %s", (kind) => {
  let backend: Awaited<ReturnType<typeof openBackend>>;
  let provider: FakePaymentProvider;
  let connectors: Map<string, EffectConnector>;
  const db = () => backend.database.db;
  const sql = <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
    backend.database.sql.query<T>(text, params);

  beforeAll(async () => {
    backend = await openBackend(kind);
    await seedDemoOrders({ db: db() });
    provider = await startFakePaymentProvider();
    connectors = new Map(
      [paymentConnector(httpPaymentGateway({ baseUrl: provider.url, timeoutMs: 500 }))].map((c) => [
        c.kind,
        c,
      ]),
    );
  });
  afterAll(async () => {
    await provider?.close();
    await backend?.close();
  });

  async function drain() {
    for (let i = 0; i < 50; i++) {
      await dispatchDueEffects({ db: db(), connectors, owner: `receipts-${kind}`, retry: FAST });
      const [open] = await sql<{ n: number }>(
        "SELECT count(*)::int AS n FROM effects WHERE status IN ('queued', 'sending')",
      );
      if (open?.n === 0) return;
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  const effectOf = async (id: string) =>
    (
      await sql<{ status: string; last_error: string | null }>(
        "SELECT status, last_error FROM effects WHERE id = $1",
        [id],
      )
    )[0];
  const paidTo = (key: string) => provider.created.filter((r) => r.key === key).length;
  const refund = (threadId: string, ref: string, orderId: string, amountCents: number, purpose?: string) =>
    recordRefund({
      db: db(),
      decisionRef: ref,
      orderId,
      threadId,
      amountCents,
      currency: "EUR",
      method: "original_payment",
      ...(purpose ? { purpose } : {}),
    });

  it("a refund spends the receipt that authorized exactly it, names the decider, and is paid once", async () => {
    await recordApproval({
      db: db(),
      threadId: `t-ok-${kind}`,
      authorizes: [{ effect: "refund", orderId: "ORD-1001", amountCents: 500 }],
      by: { id: "u-9", label: "erin@test.local" },
    });
    const recorded = await refund(`t-ok-${kind}`, `ok-${kind}`, "ORD-1001", 500);
    if (!recorded.ok) throw new Error("not recorded");
    expect(recorded.authorized).toBe(true);
    expect(recorded.refund.approvedBy).toBe("erin@test.local");
    await drain();
    expect(await effectOf(recorded.effect.id)).toMatchObject({ status: "delivered" });
    expect(paidTo(`refund:ok-${kind}`)).toBe(1);
    // The same decision's refund again (a re-run) finds its own, spends nothing new, pays nothing new.
    const again = await refund(`t-ok-${kind}`, `ok-${kind}`, "ORD-1001", 500);
    expect(again.ok && again.refund.id).toBe(recorded.refund.id);
    await drain();
    expect(paidTo(`refund:ok-${kind}`)).toBe(1);
  });

  it("no receipt, another order, another amount or a spent receipt: recorded held as an operator task, never paid", async () => {
    const thread = `t-held-${kind}`;
    await recordApproval({
      db: db(),
      threadId: thread,
      authorizes: [{ effect: "refund", orderId: "ORD-1003", amountCents: 700 }],
    });
    // Another order than the one approved, another amount, then the approved one, then the same one again.
    const attempts = [
      await refund(thread, `held-a-${kind}`, "ORD-1004", 700),
      await refund(thread, `held-b-${kind}`, "ORD-1003", 701),
      await refund(thread, `held-c-${kind}`, "ORD-1003", 700),
      await refund(thread, `held-d-${kind}`, "ORD-1003", 700),
      // And nothing at all on another thread.
      await refund(`t-nothing-${kind}`, `held-e-${kind}`, "ORD-1003", 100),
    ];
    expect(attempts.map((a) => a.ok && a.authorized)).toEqual([false, false, true, false, false]);
    await drain();
    for (const [i, a] of attempts.entries()) {
      if (!a.ok) throw new Error("refused");
      const effect = await effectOf(a.effect.id);
      if (i === 2) {
        expect(effect).toMatchObject({ status: "delivered" });
        continue;
      }
      expect(effect?.status, `attempt ${i}`).toBe("failed");
      expect(effect?.last_error).toMatch(/^forbidden:no_receipt/);
      expect(a.refund.approvedBy).toMatch(/^nobody/);
    }
    expect(
      provider.created.filter((r) => r.key.startsWith(`refund:held-`) && r.key.endsWith(kind)),
    ).toHaveLength(1);
  });

  it("an effect whose payload differs from its receipt by one field is refused at delivery; the provider gets nothing", async () => {
    const thread = `t-tamper-${kind}`;
    await recordApproval({
      db: db(),
      threadId: thread,
      authorizes: [
        { effect: "refund", orderId: "ORD-1005", amountCents: 300 },
        { effect: "refund", orderId: "ORD-1005", amountCents: 400 },
      ],
    });
    const a = await refund(thread, `tamper-a-${kind}`, "ORD-1005", 300);
    const b = await refund(thread, `tamper-b-${kind}`, "ORD-1005", 400);
    if (!a.ok || !b.ok) throw new Error("not recorded");
    // Between record and delivery: one effect's amount raised by a cent, the other's order changed.
    await sql("UPDATE effects SET payload = jsonb_set(payload, '{amountCents}', '301') WHERE id = $1", [
      a.effect.id,
    ]);
    await sql("UPDATE effects SET payload = jsonb_set(payload, '{orderId}', '\"ORD-1006\"') WHERE id = $1", [
      b.effect.id,
    ]);
    await drain();
    for (const effect of [a.effect, b.effect]) {
      const row = await effectOf(effect.id);
      expect(row).toMatchObject({ status: "failed" });
      expect(row?.last_error).toMatch(/^forbidden:receipt_mismatch/);
    }
    expect(
      provider.created.filter((r) => r.key.startsWith("refund:tamper-") && r.key.endsWith(kind)),
    ).toHaveLength(0);
  });

  it("a receipt changed in storage is found by the verify command and refused at delivery", async () => {
    const thread = `t-forged-${kind}`;
    const receiptId = await recordApproval({
      db: db(),
      threadId: thread,
      authorizes: [{ effect: "refund", orderId: "ORD-1007", amountCents: 200 }],
    });
    expect(await verifyReceipts({ db: db() })).toMatchObject({ problems: [] });
    const recorded = await refund(thread, `forged-${kind}`, "ORD-1007", 200);
    if (!recorded.ok) throw new Error("not recorded");
    // Receipts refuse changes; someone with the database's owner rights changes one anyway (amount 200 → 20000).
    await expect(sql("UPDATE decision_receipts SET key_id = 'x'")).rejects.toThrow(/append-only/);
    await sql("ALTER TABLE decision_receipts DISABLE TRIGGER decision_receipts_no_update_delete");
    await sql(
      "UPDATE decision_receipts SET body = jsonb_set(body, '{authorizes,0,terms,amountCents}', '20000') WHERE id = $1",
      [receiptId],
    );
    await sql("ALTER TABLE decision_receipts ENABLE TRIGGER decision_receipts_no_update_delete");
    const checked = await verifyReceipts({ db: db() });
    expect(checked.problems).toEqual([
      { id: receiptId, threadId: thread, problem: "its signature does not match its body" },
    ]);
    await drain();
    const effect = await effectOf(recorded.effect.id);
    expect(effect?.status).toBe("failed");
    expect(effect?.last_error).toMatch(/^forbidden:receipt_invalid/);
    expect(paidTo(`refund:forged-${kind}`)).toBe(0);
    if (kind === "postgres") {
      // The command an auditor runs offline says the same, and fails.
      const url = backend.url;
      if (url) {
        const cli = spawnSync(
          "node_modules/.bin/tsx",
          ["--conditions=react-server", "scripts/receipts.ts", "verify"],
          { env: { ...process.env, DATABASE_URL: url }, encoding: "utf8" },
        );
        expect(cli.status, cli.stderr).toBe(1);
        expect(cli.stdout.trim().split("\n")).toEqual([
          `receipt ${receiptId} (thread ${thread}): its signature does not match its body`,
          `${checked.receipts} receipts checked, 1 do not verify`,
        ]);
      }
    }
  });

  it("one refund per purpose, whatever decision asks for the second", async () => {
    const thread = `t-purpose-${kind}`;
    await recordApproval({
      db: db(),
      threadId: thread,
      authorizes: [{ effect: "refund", orderId: "ORD-1008", amountCents: 2000 }],
    });
    await recordApproval({
      db: db(),
      threadId: thread,
      authorizes: [{ effect: "refund", orderId: "ORD-1008", amountCents: 2000 }],
    });
    const purpose = `store_credit:${thread}:ORD-1008`;
    const first = await refund(thread, `purpose-a-${kind}`, "ORD-1008", 2000, purpose);
    const second = await refund(thread, `purpose-b-${kind}`, "ORD-1008", 2000, purpose);
    expect(first.ok && first.authorized).toBe(true);
    expect(second).toMatchObject({ ok: false, reason: "duplicate" });
    expect(await sql("SELECT amount_cents FROM refunds WHERE purpose = $1", [purpose])).toEqual([
      { amount_cents: 2000 },
    ]);
  });

  it("an account change is recorded against the review that approved exactly that value, else held", async () => {
    const thread = `t-account-${kind}`;
    const approved = {
      accountEmail: "lars.jensen@example.com",
      field: "payout",
      to: "DE89370400440532013000",
    };
    await recordApproval({
      db: db(),
      threadId: thread,
      authorizes: [{ effect: "account_change", ...approved }],
    });
    const change = (ref: string, to: string) =>
      recordAccountChange({
        db: db(),
        decisionRef: ref,
        threadId: thread,
        accountEmail: approved.accountEmail,
        customerName: "Lars Jensen",
        field: "payout",
        from: null,
        to,
      });
    const other = await change(`acct-a-${kind}`, "DE02120300000000202051");
    const same = await change(`acct-b-${kind}`, approved.to);
    expect(other.change.receiptId).toBeNull();
    expect(other.effect).toMatchObject({ status: "failed" });
    expect(other.effect.lastError).toMatch(/^forbidden:no_receipt/);
    expect(same.change.receiptId).not.toBeNull();
    expect(same.effect.status).toBe("queued");
    // The receipt holds no IBAN: a keyed digest of it.
    const stored = await sql<{ body: unknown }>("SELECT body FROM decision_receipts WHERE thread_id = $1", [
      thread,
    ]);
    expect(JSON.stringify(stored)).not.toContain("DE89");
  });
});
