import { authedFetch } from "../support/auth";
import { agentFor, answer, createTicket, runOnce } from "./client";
import { useTestServer } from "./setup";

/*
 * Every offer of money is computed from the ledgers at that moment (issue 55): a refund approval asked while the order
 * had money left, whose order another decision refunded in full since, offers nothing to approve — the thread view's
 * question says what is left now (none) with a finding that says why — and an approval sent anyway, on any route, is
 * refused against what is left (422), while a rejection is taken.
 */
describe("money offered is money left", () => {
  const ctx = useTestServer("moneynow", { prefix: "ORD-6", count: 1 });

  const view = async (threadId: string) =>
    (await (await authedFetch(ctx.url(`/api/threads/${threadId}`), {}, "supervisor")).json()) as {
      pendingInterrupts: {
        interruptId: string;
        payload: {
          refundable?: { amountCents: number };
          findings: { code: string; severity: string; message: string }[];
        };
      }[];
    };

  it("an order refunded in full since the question was asked offers no approval, and an approval is refused", async () => {
    const base = ctx.url("");
    const message = "The television from ORD-6000 arrived broken, please refund it.";
    const [first, second] = [await createTicket(base, message), await createTicket(base, message)];
    const asked = await runOnce(agentFor(base, first), { message });
    const other = await runOnce(agentFor(base, second), { message });
    expect(asked.interrupts[0]?.reason).toBe("refund_approval");
    const before = await view(first);
    expect(before.pendingInterrupts[0]?.payload.refundable?.amountCents ?? 50_000).toBe(50_000);

    // The other thread's decision refunds the whole order.
    await runOnce(agentFor(base, second), {
      resume: [answer(other.interrupts[0]!, { decision: "approve" })],
    });

    const now = await view(first);
    const question = now.pendingInterrupts[0]?.payload;
    expect(question?.refundable?.amountCents).toBe(0);
    expect(question?.findings).toContainEqual(
      expect.objectContaining({ code: "refunded_since", severity: "block" }),
    );
    expect(question?.findings.find((f) => f.code === "refunded_since")?.message).toMatch(
      /€500\.00 of this order was refunded since this was asked .*nothing is left to refund/,
    );
    // The finding about the amount asked is stale now: kept as what was said then, no longer a reason of its own.
    expect(question?.findings.find((f) => f.code === "over_auto_limit")).toEqual({
      code: "over_auto_limit",
      severity: "info",
      message: "When this was asked: €500.00 is above the automatic approval limit of €50.00.",
    });

    const interruptId = now.pendingInterrupts[0]!.interruptId;
    const approve = await authedFetch(
      ctx.url(`/api/threads/${first}/decisions/${interruptId}`),
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ answer: { decision: "approve" } }),
      },
      "supervisor",
    );
    expect(approve.status).toBe(422);
    expect(((await approve.json()) as { code: string }).code).toBe("unprocessable:answer");

    const reject = await runOnce(agentFor(base, first), {
      resume: [
        answer(asked.interrupts[0]!, { decision: "reject", note: "Refunded in full by another request." }),
      ],
    });
    expect(reject.interrupts.map((i) => i.reason)).toEqual(["confirm_email"]);
    const refunds = await ctx.prepared.sql.count("refunds", "order_id = 'ORD-6000'");
    expect(refunds).toBe(1);
  });
});
