import { authedFetch, emailOf, type Who } from "../support/auth";
import { type FakePaymentProvider, startFakePaymentProvider } from "../support/fake-payment";
import { agentFor, createTicket, runOnce } from "./client";
import { type Backend, serverOn, until } from "./setup";
import { settledView } from "./thread-api";

/*
 * "Answer differently" (issue 34): a refund approved on the main line (paid, the reply sent) is answered "reject" on a
 * branch made from where the approval was asked. The branch asks again (a new question), is answered like any decision
 * (by someone else than the one who branched, who could only have rejected), and ends with its own reply; the page's
 * view says what the other line answered and where it got to. Nothing is paid twice — counted at the payment provider
 * over real HTTP — and the ledger and the audit trail name who answered each. Both databases.
 */

interface Pending {
  interruptId: string;
  action: string;
  payload: Record<string, unknown>;
}
interface View {
  status: string;
  activeRunId: string | null;
  checkpointId: string | null;
  pendingInterrupts: Pending[];
  values: Record<string, unknown>;
  decisions: {
    interruptId: string;
    action: string;
    status: string;
    resolvedBy: string | null;
    answer: unknown;
  }[];
  answeringDifferently: {
    interruptId: string;
    action: string;
    answer: unknown;
    resolvedBy: string | null;
    otherHead: string | null;
    askedAgain: string | null;
  } | null;
}

const settled = (base: string, threadId: string) => settledView<View>(base, threadId);

const post = (base: string, path: string, body: unknown, who: Who) =>
  authedFetch(
    `${base}${path}`,
    { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) },
    who,
  );

async function decide(base: string, threadId: string, action: string, answer: unknown, who: Who) {
  const v = await settled(base, threadId);
  const asked = v.pendingInterrupts.find((p) => p.action === action);
  if (!asked) throw new Error(`no pending ${action}: ${JSON.stringify(v.pendingInterrupts)}`);
  const res = await post(base, `/api/threads/${threadId}/decisions/${asked.interruptId}`, { answer }, who);
  if (res.status !== 202 && res.status !== 200)
    throw new Error(`decide ${action}: ${res.status} ${await res.text()}`);
  return asked.interruptId;
}

describe.each<Backend>(["postgres", "pglite"])("answer differently on %s", (backend) => {
  let base = "";
  let stop: () => Promise<void> = async () => {};
  let provider: FakePaymentProvider;
  beforeAll(async () => {
    provider = await startFakePaymentProvider();
    ({ base, stop } = await serverOn(backend, "answerdiff", {
      PAYMENT_URL: provider.url,
      EFFECT_POLL_MS: "100",
    }));
  });
  afterAll(async () => {
    await stop();
    await provider?.close();
  });

  test("approved on the main line, rejected on a branch: both outcomes, one payment, every answer named", async () => {
    const message = "Refund ORD-1002 please, it arrived broken.";
    const threadId = await createTicket(base, message);
    await runOnce(agentFor(base, threadId), { message, as: "intake" });
    const approval = await decide(base, threadId, "refund_approval", { decision: "approve" }, "supervisor");
    await decide(base, threadId, "confirm_email", { choice: "send" }, "supervisor");
    const main = await settled(base, threadId);
    expect(main.status).toBe("completed");
    await until("the payment at the provider", () => provider.created.some((r) => r.orderId === "ORD-1002"));

    // Not for a decision still open, not for an operator, not for a decision of another thread.
    const open = await createTicket(base, "Refund ORD-1003 please, it broke.");
    await runOnce(agentFor(base, open), { message: "Refund ORD-1003 please, it broke.", as: "intake" });
    const openId = (await settled(base, open)).pendingInterrupts[0]?.interruptId as string;
    const notTaken = await post(
      base,
      `/api/threads/${open}/decisions/${openId}/answer-differently`,
      {},
      "admin",
    );
    expect(notTaken.status).toBe(409);
    expect(((await notTaken.json()) as { code: string }).code).toBe("conflict:decision_not_taken");
    const path = `/api/threads/${threadId}/decisions/${approval}/answer-differently`;
    expect((await post(base, path, {}, "operator")).status).toBe(403);
    expect(
      (await post(base, `/api/threads/${open}/decisions/${approval}/answer-differently`, {}, "admin")).status,
    ).toBe(404);

    // The admin branches from where the approval was asked: the question is asked again, as a new question.
    const branched = await post(base, path, {}, "admin");
    expect(branched.status).toBe(202);
    const asked = await settled(base, threadId);
    expect(asked.pendingInterrupts.map((p) => p.action)).toEqual(["refund_approval"]);
    expect(asked.pendingInterrupts[0]?.interruptId).not.toBe(approval);
    expect(asked.answeringDifferently).toMatchObject({
      interruptId: approval,
      action: "refund_approval",
      answer: { decision: "approve" },
      resolvedBy: emailOf("supervisor"),
      otherHead: main.checkpointId,
      // The question on the branch that asks it again: the form there opens on the other way.
      askedAgain: asked.pendingInterrupts[0]?.interruptId,
    });
    // The one who branched started the branch's run: approving what it asks is someone else's (four-eyes).
    const own = await post(
      base,
      `/api/threads/${threadId}/decisions/${asked.pendingInterrupts[0]?.interruptId}`,
      { answer: { decision: "approve" } },
      "admin",
    );
    expect(own.status).toBe(403);

    // An operator rejects it on the branch; the rejection's reply is sent.
    const rejected = await decide(
      base,
      threadId,
      "refund_approval",
      { decision: "reject", note: "The damage is not covered." },
      "operator",
    );
    await decide(base, threadId, "confirm_email", { choice: "send" }, "operator");
    const branch = await settled(base, threadId);
    expect(branch.status).toBe("completed");
    expect(branch.values.decision).toMatchObject({ decision: "reject" });
    expect(branch.values.refund ?? null).toBeNull();
    expect(branch.answeringDifferently?.interruptId).toBe(approval);
    expect(branch.answeringDifferently?.askedAgain).toBeNull();

    // The other line's outcome, as the page reads it: the refund it recorded.
    const other = (await (
      await authedFetch(`${base}/api/threads/${threadId}/checkpoints/${main.checkpointId}`, {}, "supervisor")
    ).json()) as { values: { refund?: { amountCents?: number } } };
    expect(other.values.refund?.amountCents).toBe(24_900);

    // Nothing paid twice, at the provider; the ledger and the audit trail name who answered each, and who branched.
    await new Promise((r) => setTimeout(r, 500));
    expect(provider.created.filter((r) => r.orderId === "ORD-1002")).toHaveLength(1);
    const byId = new Map(branch.decisions.map((d) => [d.interruptId, d]));
    expect(byId.get(approval)).toMatchObject({ status: "resolved", resolvedBy: emailOf("supervisor") });
    expect(byId.get(rejected)).toMatchObject({ status: "resolved", resolvedBy: emailOf("operator") });
    const audit = (await (
      await authedFetch(`${base}/api/audit?threadId=${threadId}`, {}, "admin")
    ).json()) as {
      items: { action: string; actor: string; interruptId?: string | null; detail?: unknown }[];
    };
    expect(audit.items.filter((i) => i.action === "decision" && i.interruptId === approval)).toEqual([
      expect.objectContaining({ actor: emailOf("supervisor") }),
    ]);
    expect(audit.items.filter((i) => i.action === "decision" && i.interruptId === rejected)).toEqual([
      expect.objectContaining({ actor: emailOf("operator") }),
    ]);
    expect(audit.items.filter((i) => i.action === "fork")).toEqual([
      expect.objectContaining({
        actor: emailOf("admin"),
        detail: expect.objectContaining({ answersDifferently: approval }),
      }),
    ]);
  });
});
