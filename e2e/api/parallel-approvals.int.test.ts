import type { Interrupt } from "@ag-ui/core";
import { openThreadText } from "@/lib/db/vault";
import { waitForEffectsToSettle } from "../chaos/effects";
import { authedFetch, emailOf, type Who } from "../support/auth";
import { agentFor, answer, createTicket, payloadOf, postRun, runBody, runOnce } from "./client";
import { customerAccount, emailBodies } from "./sealed";
import { useTestServer } from "./setup";
import { readSse } from "./sse";

/**
 * The second agent, for real: an account change raises two reviews in one super-step (a fraud check for a
 * supervisor, a data check for an operator). Both answered in one AG-UI resume, or card by card by two people at
 * once; one answer alone is not a resume; one person may not approve both.
 */
describe("parallel approvals (account-change agent)", () => {
  const ctx = useTestServer("parallel");
  const url = ctx.url;

  async function snapshot() {
    const [row] = await ctx.prepared.sql.rows(
      `SELECT (SELECT count(*) FROM runs)::int AS runs, (SELECT count(*) FROM outbox)::int AS outbox,
        (SELECT count(*) FROM checkpoint.checkpoints)::int AS checkpoints, (SELECT count(*) FROM audit_log)::int AS audit,
        (SELECT string_agg(interrupt_id || ':' || status, ',' ORDER BY interrupt_id) FROM decisions) AS decisions`,
    );
    return row;
  }

  /** A payout change for ORD-1001's customer, run until both reviews are pending. */
  async function twoReviews() {
    const message = "Please change my payout account to DE89 3704 0044 0532 0130 00.";
    const threadId = await createTicket(ctx.server!.url, message, "ORD-1001", "account_change");
    const first = await runOnce(agentFor(ctx.server!.url, threadId), { message, as: "intake" });
    const byReview = (review: string) =>
      first.interrupts.find((i) => (payloadOf(i) as { review?: string }).review === review) as Interrupt;
    return { threadId, interrupts: first.interrupts, fraud: byReview("fraud"), data: byReview("data") };
  }

  function decide(threadId: string, interruptId: string, answerValue: unknown, who: Who) {
    return authedFetch(
      url(`/api/threads/${threadId}/decisions/${interruptId}`),
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ answer: answerValue }),
      },
      who,
    );
  }

  async function waitForEnd(threadId: string) {
    await readSse(url(`/api/threads/${threadId}/events?after=0`), {}, () => {}, { maxMs: 20_000 });
    return (await authedFetch(url(`/api/threads/${threadId}`), {}, "viewer")).json();
  }

  it("raises both reviews in one super-step: two interrupts, two inbox items, one thread", async () => {
    const { threadId, interrupts, fraud, data } = await twoReviews();
    expect(interrupts).toHaveLength(2);
    expect(interrupts.map((i) => i.reason)).toEqual(["review_change", "review_change"]);
    expect(payloadOf(fraud)).toMatchObject({ requiredRole: "supervisor", change: { field: "payout" } });
    expect(payloadOf(data)).toMatchObject({ requiredRole: "operator", customer: { name: "Anna Schmidt" } });
    const inbox = await (
      await authedFetch(url("/api/threads?action=review_change&limit=200"), {}, "viewer")
    ).json();
    const mine = inbox.items.filter((i: { thread: { threadId: string } }) => i.thread.threadId === threadId);
    expect(mine).toHaveLength(2);
  });

  it("takes both answers in one AG-UI resume; either review may reject", async () => {
    const { threadId, fraud, data } = await twoReviews();
    const done = await runOnce(agentFor(ctx.server!.url, threadId), {
      resume: [
        answer(fraud, { decision: "approve" }),
        answer(data, { decision: "reject", note: "IBAN mistyped" }),
      ],
      as: "supervisor",
    });
    expect(done.finished).toBeDefined();
    expect(done.interrupts).toHaveLength(0);
    const view = await (await authedFetch(url(`/api/threads/${threadId}`), {}, "viewer")).json();
    expect(view.status).toBe("completed");
    expect(view.values.outcome).toMatchObject({ status: "rejected", reasons: ["IBAN mistyped"] });
    expect(await ctx.prepared.sql.count("outbox", "thread_id = $1", [threadId])).toBe(1);
    // A rejected change records nothing to apply: no change, no account_update effect.
    expect(await ctx.prepared.sql.count("account_changes", "thread_id = $1", [threadId])).toBe(0);
    expect(
      await ctx.prepared.sql.count("effects", "thread_id = $1 AND kind = 'account_update'", [threadId]),
    ).toBe(0);
  });

  it("refuses one answer alone as a resume (422 naming the missing id), and one person approving both", async () => {
    const { threadId, fraud, data } = await twoReviews();
    const before = await snapshot();
    const body = (resume: unknown[]) => runBody(threadId, resume);
    const one = await postRun(
      ctx.server!.url,
      threadId,
      body([answer(fraud, { decision: "approve" })]),
      "supervisor",
    );
    expect(one.status).toBe(422);
    expect(one.json?.code).toBe("unprocessable:resume_incomplete");
    expect((one.json?.details as { missing?: unknown } | undefined)?.missing).toEqual([
      { interruptId: data.id, action: "review_change" },
    ]);
    const both = await postRun(
      ctx.server!.url,
      threadId,
      body([answer(fraud, { decision: "approve" }), answer(data, { decision: "approve" })]),
      "supervisor",
    );
    expect(both.status).toBe(403);
    expect(both.json?.code).toBe("forbidden:four_eyes_both_reviews");
    const role = await decide(threadId, fraud.id, { decision: "approve" }, "operator");
    expect(role.status).toBe(403);
    expect((await role.json()).code).toBe("forbidden:review_role");
    expect(await snapshot()).toEqual(before);
  });

  it("two people answering the two cards at once: one winner per card, and the run goes on once both are in", async () => {
    for (let round = 0; round < 4; round++) {
      const { threadId, fraud, data } = await twoReviews();
      // Each card is also raced by a second person: exactly one answer per card wins.
      const results = await Promise.all([
        decide(threadId, fraud.id, { decision: "approve" }, "supervisor"),
        decide(threadId, data.id, { decision: "approve" }, "operator"),
        decide(threadId, data.id, { decision: "approve" }, "admin"),
      ]);
      const statuses = results.map((r) => r.status);
      const bodies = await Promise.all(results.map((r) => r.json()));
      expect(statuses[0]).not.toBe(409);
      const dataWins = statuses.slice(1).filter((s) => s !== 409);
      expect(dataWins).toHaveLength(1);
      expect(bodies.filter((b) => b.resumed === true)).toHaveLength(1);
      const losers = bodies.filter((b) => b.code === "conflict:interrupt_resolved");
      expect(losers).toHaveLength(1);
      const view = await waitForEnd(threadId);
      expect(view.status).toBe("completed");
      expect(view.values.outcome).toMatchObject({ status: "applied" });
      const ledger = await ctx.prepared.sql.rows<{ status: string; resolved_by: string }>(
        "SELECT status, resolved_by FROM decisions WHERE thread_id = $1 ORDER BY interrupt_id",
        [threadId],
      );
      expect(ledger.map((d) => d.status)).toEqual(["resolved", "resolved"]);
      expect(ledger.map((d) => d.resolved_by)).toContain(emailOf("supervisor"));
      expect(await ctx.prepared.sql.count("runs", "thread_id = $1 AND kind = 'resume'", [threadId])).toBe(1);
      // The change is made once in the customer's account by its effect, and only then is the customer emailed.
      await waitForEffectsToSettle(ctx.prepared.sql, 20_000);
      const [stored] = await ctx.prepared.sql.rows<{
        to_value: string;
        applied: boolean;
        account_email: string;
      }>(
        "SELECT to_value, applied_at IS NOT NULL AS applied, account_email FROM account_changes WHERE thread_id = $1",
        [threadId],
      );
      // Its values are sealed under the thread's key (lib/shop/accounts.ts): opened as the server reads them.
      const change = stored && {
        ...stored,
        to_value: await openThreadText(ctx.prepared.sql, threadId, stored.to_value),
        account_email: await openThreadText(ctx.prepared.sql, threadId, stored.account_email),
      };
      expect(change).toMatchObject({ to_value: "DE89 3704 0044 0532 0130 00", applied: true });
      expect(await ctx.prepared.sql.count("account_changes", "thread_id = $1", [threadId])).toBe(1);
      const account = await customerAccount(ctx.prepared.sql, change!.account_email);
      expect(account?.payout).toBe("DE89 3704 0044 0532 0130 00");
      const mails = await emailBodies(ctx.prepared.sql, threadId);
      expect(mails).toHaveLength(1);
      expect(mails[0]).toContain("has been updated as you asked");
      const effect = (
        await (await authedFetch(url(`/api/threads/${threadId}`), {}, "viewer")).json()
      ).effects.find((e: { kind: string }) => e.kind === "account_update");
      expect(effect).toMatchObject({ status: "delivered", attempts: 1 });
    }
  });

  it("keeps a card answered alone as taken (not in the inbox), and says who took it on the thread", async () => {
    const { threadId, fraud } = await twoReviews();
    const first = await decide(threadId, fraud.id, { decision: "approve" }, "supervisor");
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ resumed: false, waitingFor: [{ action: "review_change" }] });
    const view = await (await authedFetch(url(`/api/threads/${threadId}`), {}, "viewer")).json();
    const card = view.pendingInterrupts.find((p: { interruptId: string }) => p.interruptId === fraud.id);
    expect(card.answeredBy).toBe(emailOf("supervisor"));
    const inbox = await (
      await authedFetch(url("/api/threads?action=review_change&limit=200"), {}, "viewer")
    ).json();
    const items = inbox.items.filter((i: { thread: { threadId: string } }) => i.thread.threadId === threadId);
    expect(items).toHaveLength(1);
    const again = await decide(threadId, fraud.id, { decision: "reject", note: "changed my mind" }, "admin");
    expect(again.status).toBe(409);
  });
});
