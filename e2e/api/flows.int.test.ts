import { AppError } from "@/lib/contract/errors";
import { authedFetch, emailOf } from "../support/auth";
import type { TestServer } from "../support/server";
import { agentFor, answer, createTicket, payloadOf, runOnce } from "./client";
import { emailBodies } from "./sealed";
import { cleanUp, prepareDatabase, startTestServer } from "./setup";

/**
 * The refund story over HTTP against `next start` on a fresh Postgres database, driven by an unmodified
 * `HttpAgent` (its event verification is always on).
 */
describe("refund runs over HTTP with HttpAgent", () => {
  let prepared: Awaited<ReturnType<typeof prepareDatabase>>;
  let server: TestServer | undefined;

  beforeAll(async () => {
    prepared = await prepareDatabase("flows", { prefix: "ORD-6", count: 5 });
    server = await startTestServer({ databaseUrl: prepared.url });
  });
  afterAll(async () => {
    await cleanUp([server], prepared);
  });

  const base = () => server!.url;

  async function ticket(message: string, orderRef?: string) {
    const threadId = await createTicket(base(), message, orderRef);
    const agent = agentFor(base(), threadId);
    const first = await runOnce(agent, { message });
    return { threadId, agent, first };
  }

  it("pauses a large refund for approval, then approving and sending finishes it with one refund and one email", async () => {
    const { threadId, agent, first } = await ticket(
      "My headphones from ORD-1002 are broken, please refund them.",
    );
    expect(first.finished).toBeDefined();
    expect(first.interrupts).toHaveLength(1);
    const approval = first.interrupts[0]!;
    expect(approval.reason).toBe("refund_approval");
    expect(payloadOf(approval)).toMatchObject({
      action: "refund_approval",
      requested: { amountCents: 24900 },
    });
    expect(approval.id).toMatch(/^[0-9a-f]{32}$/);
    const types = first.events.map((e) => e.type);
    expect(types.slice(0, 1)).toEqual(["RUN_STARTED"]);
    expect(types.slice(-3)).toEqual(["MESSAGES_SNAPSHOT", "STATE_SNAPSHOT", "RUN_FINISHED"]);
    expect(types).toEqual(expect.arrayContaining(["STEP_STARTED", "TOOL_CALL_START", "TOOL_CALL_RESULT"]));

    const second = await runOnce(agent, {
      resume: [answer(approval, { decision: "approve" })],
    });
    expect(second.events.map((e) => e.type)).toContain("TEXT_MESSAGE_CONTENT");
    expect(second.interrupts.map((i) => i.reason)).toEqual(["confirm_email"]);
    // The inbox names the order and customer even for a decision whose payload does not (the email).
    const inbox = await (await authedFetch(`${base()}/api/threads?action=confirm_email&limit=200`)).json();
    const item = inbox.items.find((i: { thread: { threadId: string } }) => i.thread.threadId === threadId);
    expect(item.decision).toMatchObject({
      action: "confirm_email",
      orderId: "ORD-1002",
      customerName: "Lars Jensen",
    });
    const third = await runOnce(agent, { resume: [answer(second.interrupts[0]!, { choice: "send" })] });
    expect((third.finished as { outcome?: { type: string } }).outcome?.type).toBe("success");

    expect(await prepared.sql.count("refunds", "order_id = $1", ["ORD-1002"])).toBe(1);
    expect(await prepared.sql.count("outbox", "thread_id = $1", [threadId])).toBe(1);
    const state = await (await authedFetch(`${base()}/api/threads/${threadId}`)).json();
    expect(state.status).toBe("completed");
    expect(state.pendingInterrupts).toEqual([]);
    const decided = state.decisions.find((d: { action: string }) => d.action === "refund_approval");
    expect(decided).toMatchObject({
      status: "resolved",
      // Recorded under the signed-in user who decided, whatever the client claims.
      resolvedBy: emailOf("supervisor"),
      answer: { decision: "approve" },
    });
  });

  it("rejects with a note: no refund, the reply says so", async () => {
    const { agent, first } = await ticket("Refund please for ORD-1006, the lamp is not what I expected.");
    const findings = (payloadOf(first.interrupts[0]!).findings as { code: string }[]).map((f) => f.code);
    expect(findings).toContain("late_request");
    const second = await runOnce(agent, {
      resume: [answer(first.interrupts[0]!, { decision: "reject", note: "Outside the 30-day window." })],
    });
    const email = payloadOf(second.interrupts[0]!);
    expect(String(email.body)).toMatch(/reject|not able|unable|cannot/i);
    await runOnce(agent, { resume: [answer(second.interrupts[0]!, { choice: "dont_send" })] });
    expect(await prepared.sql.count("refunds", "order_id = $1", ["ORD-1006"])).toBe(0);
  });

  it("approves a smaller amount", async () => {
    const { agent, first } = await ticket("The laptop from ORD-1008 has a scratch, I want a refund.");
    const second = await runOnce(agent, {
      resume: [
        answer(first.interrupts[0]!, { decision: "approve_partial", amountCents: 20000, note: "scratch" }),
      ],
    });
    expect(second.interrupts[0]?.reason).toBe("confirm_email");
    const [refund] = await prepared.sql.rows<{ amount_cents: number }>(
      "SELECT amount_cents FROM refunds WHERE order_id = 'ORD-1008'",
    );
    expect(refund?.amount_cents).toBe(20000);
  });

  it("answers select_option, input_text and confirm_email (edited)", async () => {
    // No order number: the agent asks for it (input_text), then ORD-1004 is a bank transfer → select_option.
    const { threadId, agent, first } = await ticket(
      "I would like a refund for my backpack, it tore on day two.",
    );
    expect(first.interrupts[0]?.reason).toBe("input_text");
    // An operator names the order; four-eyes leaves its approval to someone else (the supervisor).
    const identity = await runOnce(agent, {
      resume: [answer(first.interrupts[0]!, { text: "ORD-1004" })],
      as: "operator",
    });
    // A typed order number is not the sender's word: the operator confirms the sender is the order's customer.
    expect(identity.interrupts[0]?.reason).toBe("select_option");
    const approval = await runOnce(agent, {
      resume: [answer(identity.interrupts[0]!, { optionId: "sender_is_customer" })],
      as: "operator",
    });
    expect(approval.interrupts[0]?.reason).toBe("refund_approval");
    const method = await runOnce(agent, {
      resume: [answer(approval.interrupts[0]!, { decision: "approve" })],
    });
    expect(method.interrupts[0]?.reason).toBe("select_option");
    const options = (payloadOf(method.interrupts[0]!).options as { id: string }[]).map((o) => o.id);
    expect(options).toEqual(expect.arrayContaining(["original_payment", "store_credit"]));
    const email = await runOnce(agent, {
      resume: [answer(method.interrupts[0]!, { optionId: "store_credit" })],
    });
    expect(email.interrupts[0]?.reason).toBe("confirm_email");
    await runOnce(agent, {
      resume: [
        answer(email.interrupts[0]!, { choice: "send_edited", subject: "Your refund", body: "Edited body." }),
      ],
    });
    const [refund] = await prepared.sql.rows<{ method: string; amount_cents: number }>(
      "SELECT method, amount_cents FROM refunds WHERE order_id = 'ORD-1004'",
    );
    expect(refund?.method).toBe("store_credit");
    // The inbox shows the method question's money (it asks how the approved amount goes back), not the email's.
    const amounts = await prepared.sql.rows<{
      interrupt_id: string;
      amount_cents: number | null;
      currency: string;
    }>("SELECT interrupt_id, amount_cents, currency FROM decisions WHERE interrupt_id = ANY($1)", [
      [method.interrupts[0]!.id, email.interrupts[0]!.id],
    ]);
    const amountOf = (id: string) => amounts.find((a) => a.interrupt_id === id);
    expect(amountOf(method.interrupts[0]!.id)).toMatchObject({
      amount_cents: refund?.amount_cents,
      currency: "EUR",
    });
    expect(amountOf(email.interrupts[0]!.id)?.amount_cents).toBeNull();
    expect(await emailBodies(prepared.sql, threadId)).toEqual(["Edited body."]);
  });

  it("lets a new HttpAgent (a refreshed page) read the pending interrupt and resume it", async () => {
    const { threadId } = await ticket("Please refund ORD-6000, the television arrived broken.");
    const state = await (await authedFetch(`${base()}/api/threads/${threadId}`)).json();
    expect(state.status).toBe("interrupted");
    expect(state.pendingInterrupts).toHaveLength(1);
    const pending = state.pendingInterrupts[0];
    expect(pending.action).toBe("refund_approval");
    expect(pending.payload.order.id).toBe("ORD-6000");

    const fresh = agentFor(base(), threadId);
    const resumed = await runOnce(fresh, {
      resume: [{ interruptId: pending.interruptId, status: "resolved", payload: { decision: "approve" } }],
    });
    expect(resumed.interrupts[0]?.reason).toBe("confirm_email");
    expect(await prepared.sql.count("refunds", "order_id = 'ORD-6000'")).toBe(1);
  });

  it("numbers every event of a thread 1, 2, 3… across runs, in the log and on the wire", async () => {
    const { threadId, agent, first } = await ticket("Refund ORD-6001 please, it does not turn on.");
    const second = await runOnce(agent, { resume: [answer(first.interrupts[0]!, { decision: "approve" })] });
    const wire = [...first.events, ...second.events].map(
      (e) => (e.metadata as { seq?: number } | undefined)?.seq,
    );
    expect(wire).toEqual(wire.map((_, i) => i + 1));
    const logged = await prepared.sql.rows<{ seq: string }>(
      "SELECT seq FROM events WHERE thread_id = $1 ORDER BY seq",
      [threadId],
    );
    expect(logged.map((r) => Number(r.seq))).toEqual(wire);
    const state = await (await authedFetch(`${base()}/api/threads/${threadId}`)).json();
    expect(state.lastSeq).toBe(wire.length);
  });

  it("keeps a thread paused at approval across a server restart and resumes it after", async () => {
    const { threadId, first } = await ticket("Refund for ORD-6002 please: wrong colour.");
    await server!.kill();
    server = await startTestServer({ databaseUrl: prepared.url });
    const state = await (await authedFetch(`${base()}/api/threads/${threadId}`)).json();
    expect(state.pendingInterrupts.map((p: { interruptId: string }) => p.interruptId)).toEqual([
      first.interrupts[0]!.id,
    ]);
    const resumed = await runOnce(agentFor(base(), threadId), {
      resume: [answer(first.interrupts[0]!, { decision: "approve" })],
    });
    expect(resumed.interrupts[0]?.reason).toBe("confirm_email");
    expect(await prepared.sql.count("refunds", "order_id = 'ORD-6002'")).toBe(1);
  });

  it("rebuilds the same error on the client from a refusal body", async () => {
    const res = await authedFetch(`${base()}/api/threads/00000000-0000-0000-0000-000000000000`);
    const error = AppError.fromBody(await res.json(), res.status);
    expect(error.code).toBe("not_found:thread");
    expect(error.status).toBe(res.status);
  });
});
