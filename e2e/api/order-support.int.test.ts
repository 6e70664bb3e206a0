import { parseInterruptPayload } from "@/lib/contract/questions";
import { waitForEffectsToSettle } from "../chaos/effects";
import { authedFetch } from "../support/auth";
import { type FakePaymentProvider, startFakePaymentProvider } from "../support/fake-payment";
import type { TestServer } from "../support/server";
import { agentFor, answer, createTicket, payloadOf, postRun, runBody, runOnce } from "./client";
import { cleanUp, prepareDatabase, startTestServer } from "./setup";

/*
 * The fourth agent, made only with LangChain's createAgent and humanInTheLoopMiddleware, over HTTP on a real server:
 * its reviewed tool call is a decision like any other (deadline, claim, policy, ledger, audit, search), the edited
 * call runs once, and the credit reaches the (fake, over real HTTP) payment provider exactly once. ORD-5000 is a
 * €500.00 card order: the agent proposes €50.00 of store credit, which needs a supervisor (above €30.00).
 */
describe("order support: a LangChain agent's reviewed tool call, end to end", () => {
  let prepared: Awaited<ReturnType<typeof prepareDatabase>>;
  let server: TestServer | undefined;
  let provider: FakePaymentProvider;

  beforeAll(async () => {
    prepared = await prepareDatabase("ordersup", { prefix: "ORD-5", count: 2 });
    provider = await startFakePaymentProvider();
    server = await startTestServer({
      databaseUrl: prepared.url,
      env: { PAYMENT_URL: provider.url, PAYMENT_TIMEOUT_MS: "1000", EFFECT_POLL_MS: "100" },
    });
  });
  afterAll(async () => {
    await cleanUp([server], prepared);
    await provider?.close();
  });

  const api = async (
    path: string,
    who: "operator" | "supervisor" | "admin" = "supervisor",
    init: RequestInit = {},
  ) => {
    const res = await authedFetch(
      `${server!.url}${path}`,
      { ...init, headers: { "content-type": "application/json", ...(init.headers ?? {}) } },
      who,
    );
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : null };
  };

  it("ticket → reviewed call → edited arguments → approved → credit once at the provider → a reply that says what was recorded", async () => {
    // A deadline for the new kind of question, set like any other (the admin's list is read from the question kinds).
    const sla = await api("/api/admin/sla", "admin", {
      method: "POST",
      body: JSON.stringify({ action: "tool_review", minAmountCents: 0, dueSeconds: 7200 }),
    });
    expect(sla.status).toBe(200);

    const message = "My headphones arrived scratched.";
    const threadId = await createTicket(server!.url, message, "ORD-5000", "order_support");
    const agent = agentFor(server!.url, threadId);
    const run = await runOnce(agent, { message });
    const [review] = run.interrupts;
    expect(review?.reason).toBe("tool_review");
    // The stream carries the middleware's own request; the contract reads it as a tool review (as the page does).
    expect(payloadOf(review!)).toMatchObject({ actionRequests: [{ name: "issue_store_credit" }] });
    const parsed = parseInterruptPayload(payloadOf(review!));
    expect(parsed.ok && parsed.payload).toMatchObject({
      action: "tool_review",
      format: "langchain",
      requests: [
        {
          name: "issue_store_credit",
          args: { orderId: "ORD-5000", amountCents: 5000 },
          allowed: ["approve", "edit", "reject"],
          argsSchema: { properties: { amountCents: { type: "integer", minimum: 100, maximum: 20000 } } },
        },
      ],
    });

    // The decision is in the ledger with the kind's deadline, and the thread is found by its order.
    const rows = await prepared.sql.rows<{ action: string; due: number }>(
      "SELECT action, extract(epoch FROM due_at - created_at)::int AS due FROM decisions WHERE interrupt_id = $1",
      [review!.id],
    );
    expect(rows).toEqual([{ action: "tool_review", due: 7200 }]);
    // In the inbox, filtered by its kind, with the order the agent looked up and who may decide it before the click.
    const inbox = await api("/api/threads?action=tool_review", "operator");
    const item = (
      inbox.json.items as { decision: { interruptId: string; action: string; orderId: string | null } }[]
    ).find((i) => i.decision.interruptId === review!.id);
    expect(item?.decision).toMatchObject({ action: "tool_review", orderId: "ORD-5000" });
    const search = await api(`/api/search?q=ORD-5000`);
    expect((search.json.hits as { threadId: string }[]).map((h) => h.threadId)).toContain(threadId);

    const edit = (amountCents: unknown) => ({
      decisions: [
        {
          type: "edit",
          editedAction: {
            name: "issue_store_credit",
            args: { orderId: "ORD-5000", amountCents, reason: "Scratched" },
          },
        },
      ],
    });
    const before = await prepared.sql.count("decisions", "status = 'resolved'");
    // Arguments outside the tool's schema, a swapped tool, or no decision: 422 with the contract's words, nothing written.
    for (const bad of [
      edit(50_000),
      edit("lots"),
      { decisions: [] },
      {
        decisions: [{ type: "edit", editedAction: { name: "lookup_order", args: { orderId: "ORD-5001" } } }],
      },
    ]) {
      const res = await postRun(server!.url, threadId, runBody(threadId, [answer(review!, bad)]));
      expect(res.status, JSON.stringify(bad)).toBe(422);
      expect(res.json?.code).toBe("unprocessable:answer");
    }
    expect(await prepared.sql.count("decisions", "status = 'resolved'")).toBe(before);

    // The operator may not let €50.00 run (a supervisor's), whoever started the run; raising an edit needs the same.
    const operator = await api(`/api/threads/${threadId}/decisions/${review!.id}`, "operator", {
      method: "POST",
      body: JSON.stringify({ answer: edit(4000) }),
    });
    expect(operator).toMatchObject({ status: 403, json: { code: "forbidden:tool_role" } });

    // The supervisor claims it and lets it run with €20.00.
    expect(
      (
        await api("/api/inbox/claims", "supervisor", {
          method: "POST",
          body: JSON.stringify({ interruptId: review!.id }),
        })
      ).status,
    ).toBeLessThan(300);
    const done = await runOnce(agent, { resume: [answer(review!, edit(2000))] });
    expect(done.interrupts).toEqual([]);
    const second = await postRun(server!.url, threadId, runBody(threadId, [answer(review!, edit(2000))]));
    expect(second.status).toBe(409);

    await waitForEffectsToSettle(prepared.sql, 30_000);
    const credited = provider.created.filter((c) => c.orderId === "ORD-5000");
    expect(credited.map((c) => c.amountCents)).toEqual([2000]);
    // Every request the provider answered: one creation, no duplicate the key had to absorb.
    expect(provider.outcomes).toMatchObject({ created: 1 });
    expect(provider.outcomes.duplicate ?? 0).toBe(0);
    const methods = await prepared.sql.rows<{ method: string }>(
      "SELECT method FROM refunds WHERE thread_id = $1",
      [threadId],
    );
    expect(methods).toEqual([{ method: "store_credit" }]);

    const view = (await api(`/api/threads/${threadId}`)).json as {
      status: string;
      messages: { role: string; content?: string }[];
      decisions: { action: string; status: string; answer: unknown }[];
      effects: { kind: string; status: string }[];
    };
    expect(view.status).toBe("completed");
    expect(view.decisions).toMatchObject([{ action: "tool_review", status: "resolved", answer: edit(2000) }]);
    expect(view.effects).toMatchObject([{ kind: "payment", status: "delivered" }]);
    // The reply names the credit the tool recorded, in the state it recorded it, and nothing else.
    const reply = view.messages.filter((m) => m.role === "assistant" && m.content).at(-1)?.content ?? "";
    expect(reply).toContain("€20.00 has been queued");

    const audit = await api(`/api/audit?threadId=${threadId}&action=decision`);
    expect(JSON.stringify(audit.json)).toContain("tool_review");
  });
});
