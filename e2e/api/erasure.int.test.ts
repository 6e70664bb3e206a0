import { describe, expect, it } from "vitest";
import { authedFetch } from "../support/auth";
import { tablesHolding, threadPrint } from "../support/db-print";
import { agentFor, answer, createTicket, runOnce } from "./client";
import { useTestServer } from "./setup";

/*
 * Erasure by subject, not by string. Before, `POST /api/admin/erasure` replaced whatever it was given as free text in
 * every table: erasing a staff email removed the approver from the ledger, `name: "approve"` rewrote every approve
 * answer, and the account-change agent's IBAN stayed. Now it erases one customer that exists — their name and email
 * everywhere, the values their agents declare personal in their threads — and nothing of the ledger.
 */
describe("erasure of one customer", () => {
  const ctx = useTestServer("erasure");
  const rows = <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
    ctx.prepared.sql.rows<T>(text, params);
  const erase = (body: unknown) =>
    authedFetch(
      ctx.url("/api/admin/erasure"),
      { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) },
      "admin",
    );

  const scan = (needle: string) => tablesHolding(rows, needle);

  /** What must read the same before and after: the ledger, the money, and who did what. */
  async function ledger() {
    return JSON.stringify({
      decisions: await rows(
        "SELECT interrupt_id, thread_id, action, status, answer, resolved_by FROM decisions ORDER BY interrupt_id",
      ),
      refunds: await rows(
        "SELECT order_id, sum(amount_cents)::int AS cents, array_agg(approved_by ORDER BY id) AS by FROM refunds GROUP BY order_id ORDER BY order_id",
      ),
      runs: await rows(
        "SELECT id, thread_id, kind, status, started_by, started_by_label FROM runs ORDER BY id",
      ),
      // The erasure's own entry is the one row it adds.
      audit: await rows(
        "SELECT id, action, actor_id, actor_role, thread_id, interrupt_id FROM audit_log WHERE action <> 'erasure' ORDER BY id",
      ),
      threads: await rows("SELECT id, status, agent_id, order_ref FROM threads ORDER BY id"),
    });
  }

  async function refunded(order: string, message: string) {
    const base = ctx.server!.url;
    const threadId = await createTicket(base, message);
    const agent = agentFor(base, threadId);
    let run = await runOnce(agent, { message });
    // Approve, pick the first option, send: whatever the agent asks, until it is done.
    for (let step = 0; run.interrupts.length > 0 && step < 5; step++) {
      const asked = run.interrupts[0]!;
      const payload = (asked.metadata?.payload ?? {}) as { options?: { id: string }[] };
      const reply =
        asked.reason === "refund_approval"
          ? { decision: "approve" }
          : asked.reason === "confirm_email"
            ? { choice: "send" }
            : { optionId: payload.options?.[0]?.id ?? "" };
      run = await runOnce(agent, { resume: [answer(asked, reply)] });
    }
    expect(await ctx.prepared.sql.count("refunds", "order_id = $1", [order])).toBe(1);
    // The payment and the email are delivered in the background (and audited): wait, so the ledger holds still.
    const deadline = Date.now() + 20_000;
    for (;;) {
      const { effects } = (await (await authedFetch(ctx.url(`/api/threads/${threadId}/effects`))).json()) as {
        effects: { status: string }[];
      };
      if (effects.length > 0 && effects.every((e) => e.status === "delivered")) break;
      if (Date.now() > deadline)
        throw new Error(`effects of ${order} not delivered: ${JSON.stringify(effects)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    return threadId;
  }

  const LARS = { name: "Lars Jensen", email: "lars.jensen@example.com" };
  const IBAN = "DE89370400440532013000";
  const LARS_WORDS = "My headphones from ORD-1002 stopped working after a week, please refund them.";

  it("erases the customer's name, email, words and IBAN everywhere; the ledger, the money, staff and others stay", async () => {
    const base = ctx.server!.url;
    await refunded("ORD-1002", LARS_WORDS);
    const other = await refunded("ORD-1006", "The desk lamp from ORD-1006 flickers, please refund it.");
    // An account change of Lars's payout account, waiting for its two reviews.
    const change = `Please change my payout account to ${IBAN}`;
    const changeThread = await createTicket(base, change, "ORD-1002", "account_change");
    const reviews = await runOnce(agentFor(base, changeThread), { message: change });
    expect(reviews.interrupts).toHaveLength(2);

    for (const needle of [LARS.name, LARS.email, IBAN, LARS_WORDS])
      expect(await scan(needle)).not.toEqual([]);
    const before = await ledger();
    const otherBefore = await threadPrint(rows, other);
    const auditRows = await ctx.prepared.sql.count("audit_log");

    // Refused, writing nothing: a staff account, a word of the product, someone who is no customer.
    const staff = await erase({ email: "admin@test.local" });
    expect(staff.status).toBe(422);
    expect((await staff.json()).code).toBe("unprocessable:erasure_staff");
    for (const name of ["approve", "pending", "Mr Approve"]) {
      const word = await erase({ email: LARS.email, name });
      expect(word.status, name).toBe(422);
      expect((await word.json()).code).toBe("unprocessable:erasure_name");
    }
    const nobody = await erase({ email: "nobody@example.com" });
    expect(nobody.status).toBe(404);
    expect(await ctx.prepared.sql.count("audit_log")).toBe(auditRows);

    // A preview says what would change, and changes nothing.
    const preview = await erase({ email: LARS.email, preview: true });
    expect(preview.status).toBe(200);
    const previewed = await preview.json();
    expect(previewed.preview).toBe(true);
    expect(previewed.threads).toBe(2);
    expect(Object.keys(previewed.rows).length).toBeGreaterThan(3);
    expect(await ctx.prepared.sql.count("audit_log")).toBe(auditRows);
    expect(await scan(IBAN)).not.toEqual([]);

    const res = await erase({ email: LARS.email, name: "L. Jensen" });
    expect(res.status).toBe(200);
    const report = await res.json();
    expect(report.threads).toBe(2);

    for (const needle of [LARS.name, LARS.email, IBAN, LARS_WORDS])
      expect(await scan(needle), needle).toEqual([]);
    expect(await ledger()).toBe(before);
    expect(await ctx.prepared.sql.count("audit_log", "action = 'erasure'")).toBe(1);
    expect(await threadPrint(rows, other)).toBe(otherBefore);
    expect(await rows("SELECT * FROM audit_log_verify()")).toEqual([]);
    // Their threads still render.
    expect((await authedFetch(ctx.url(`/threads/${changeThread}`), {}, "viewer")).status).toBe(200);
  }, 180_000);
});
