import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { runBudgetAnswer } from "@/lib/contract/budget-contract";
import {
  confirmEmailAnswer,
  goodwillVoucherAnswer,
  inputTextAnswer,
  refundApprovalAnswer,
  reviewChangeAnswer,
  selectOptionAnswer,
  waitTimerAnswer,
} from "@/lib/contract/questions/contract";
import { openThreadText } from "@/lib/db/vault";
import { authedFetch } from "../support/auth";
import { pausedTicket } from "./client";
import { useTestServer } from "./setup";

/**
 * One decision policy for every principal: a deadline's `system:expiry` has no eyes, so it may only give answers that
 * do not act (reject, decline, don't send, cancel). Before, an admin could set an expiry answer of "approve" and have
 * their own refund — which four-eyes had just refused them — paid a second later by the sweeper.
 */

/** The rule, written out in plain code: which answers act on the world, per action (no agent allows a system to). */
function acts(action: string, payload: unknown): boolean {
  const p = (payload ?? {}) as { decision?: unknown; choice?: unknown };
  switch (action) {
    case "refund_approval":
      return p.decision === "approve" || p.decision === "approve_partial";
    case "confirm_email":
      return p.choice === "send" || p.choice === "send_edited";
    case "review_change":
      return p.decision === "approve";
    case "goodwill_voucher":
      return p.decision === "grant";
    case "run_budget":
      // Raising a spending limit lets the agent spend more: a person decides that.
      return p.decision === "raise";
    default:
      return false;
  }
}

const SHAPES = {
  refund_approval: refundApprovalAnswer,
  confirm_email: confirmEmailAnswer,
  review_change: reviewChangeAnswer,
  goodwill_voucher: goodwillVoucherAnswer,
  select_option: selectOptionAnswer,
  input_text: inputTextAnswer,
  run_budget: runBudgetAnswer,
  wait_timer: waitTimerAnswer,
} as const;
type Action = keyof typeof SHAPES;

const note = fc.constantFrom("No decision in time.", "", "  ");
/** Answers of every shape the contracts know (with optional parts present or not), and near misses. */
const answers = fc.oneof(
  fc.record({ decision: fc.constant("approve"), note }, { requiredKeys: ["decision"] }),
  fc.record({ decision: fc.constant("reject"), note }, { requiredKeys: ["decision"] }),
  fc.record(
    { decision: fc.constant("approve_partial"), amountCents: fc.integer({ min: -5, max: 500_000 }), note },
    { requiredKeys: ["decision", "amountCents"] },
  ),
  fc.record({ decision: fc.constantFrom("grant", "hold", "escalate") }),
  fc.record({ decision: fc.constant("decline"), note }, { requiredKeys: ["decision"] }),
  fc.record({ choice: fc.constantFrom("send", "dont_send") }),
  fc.record({
    choice: fc.constant("send_edited"),
    subject: fc.constant("Your refund"),
    body: fc.constant("Hello"),
  }),
  fc.record({ optionId: fc.constantFrom("store_credit", "original_payment") }),
  fc.record({ text: fc.string({ maxLength: 20 }) }),
  fc.record({ decision: fc.constant("raise"), to: fc.integer({ min: -1, max: 1000 }) }),
  fc.record({ decision: fc.constant("stop"), note }, { requiredKeys: ["decision"] }),
  fc.record({ outcome: fc.constantFrom("fired", "cancelled"), note }, { requiredKeys: ["outcome"] }),
);

describe("system:expiry may not act where a person must", () => {
  const ctx = useTestServer("sysprin", { prefix: "ORD-7", count: 2 }, { DEADLINE_SWEEP_MS: "200" });

  const policies = async () => ctx.prepared.sql.count("sla_policies");

  it("an acting expiry answer is refused at configuration with 422 and nothing written (generated over actions × answers)", async () => {
    let refusedActing = 0;
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...(Object.keys(SHAPES) as Action[])),
        answers,
        fc.integer({ min: 1, max: 1_000_000 }),
        async (action, payload, minAmountCents) => {
          const before = await policies();
          const res = await authedFetch(
            ctx.url("/api/admin/sla"),
            {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({
                action,
                minAmountCents,
                dueSeconds: 3600,
                expiryAnswer: { status: "resolved", payload },
              }),
            },
            "admin",
          );
          const body = await res.json();
          const fits = SHAPES[action].safeParse(payload).success;
          if (action === "wait_timer") {
            // A timer's deadline is its own duration: no policy of any kind applies to it.
            expect(res.status).toBe(422);
            expect(body.code).toBe("unprocessable:sla");
            expect(await policies()).toBe(before);
          } else if (!fits) {
            expect(res.status).toBe(422);
            expect(body.code).toBe("unprocessable:sla");
            expect(await policies()).toBe(before);
          } else if (acts(action, payload)) {
            refusedActing += 1;
            expect(res.status, JSON.stringify(body)).toBe(422);
            expect(body.code).toBe("unprocessable:sla_acting_answer");
            expect(await policies()).toBe(before);
          } else {
            accepted += 1;
            expect(res.status, JSON.stringify(body)).toBe(200);
            await authedFetch(
              ctx.url("/api/admin/sla"),
              {
                method: "POST",
                headers: { "content-type": "application/json" },
                body: JSON.stringify({ action, minAmountCents, dueSeconds: 3600, remove: true }),
              },
              "admin",
            );
          }
        },
      ),
      { seed: 27, numRuns: 160 },
    );
    // The generator reached both sides of the rule.
    expect(refusedActing).toBeGreaterThan(5);
    expect(accepted).toBeGreaterThan(5);
  });

  it("an acting expiry answer that is already stored is refused when applied: no refund, the decision waits for a person", async () => {
    // As a policy saved before the rule existed would be: straight into the table.
    await ctx.prepared.sql.rows(
      `INSERT INTO sla_policies (id, action, min_amount_cents, due_seconds, expiry_answer)
       VALUES ('refund_approval:0', 'refund_approval', 0, 1, '{"status":"resolved","payload":{"decision":"approve"}}')
       ON CONFLICT (id) DO UPDATE SET due_seconds = 1, expiry_answer = EXCLUDED.expiry_answer`,
    );
    const { threadId, interruptId } = await pausedTicket(ctx.server!.url, "ORD-7000");
    const deadline = Date.now() + 20_000;
    let row: { status: string; expiry_error: string | null; escalated_at: unknown } | undefined;
    while (Date.now() < deadline) {
      [row] = await ctx.prepared.sql.rows<{
        status: string;
        expiry_error: string | null;
        escalated_at: unknown;
      }>("SELECT status, expiry_error, escalated_at FROM decisions WHERE interrupt_id = $1", [interruptId]);
      if (row?.expiry_error || row?.status !== "pending") break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(row?.escalated_at).toBeTruthy();
    expect(row?.status).toBe("pending");
    // The refusal is sealed under the thread's key (it can repeat the question): opened as the server reads it.
    expect(row?.expiry_error?.startsWith("sealed:v1:")).toBe(true);
    expect(await openThreadText(ctx.prepared.sql, threadId, row?.expiry_error ?? null)).toMatch(
      /^forbidden:system_acting/,
    );
    expect(await ctx.prepared.sql.count("refunds", "order_id = 'ORD-7000'")).toBe(0);
    expect(await ctx.prepared.sql.count("runs", "thread_id = $1 AND kind <> 'input'", [threadId])).toBe(0);
    await ctx.prepared.sql.rows("DELETE FROM sla_policies WHERE id = 'refund_approval:0'");
  });
});
