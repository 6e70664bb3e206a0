import { authedFetch, signIn, TEST_PASSWORD, type Who } from "../support/auth";
import { createTicket, runBody } from "./client";
import { type Backend, serverOn, until } from "./setup";
import { readSseBody, type SseEvent } from "./sse";

/*
 * Money goes only where it was approved (issue 50), tried over HTTP as an insider would, on both databases:
 * F1 an edit of a reviewed store credit that moves it to another customer's order; F2 a fork that rewrites the
 * customer's message to name another customer's order; F3 double texting with `rollback` after a credit was recorded;
 * F4 the supervisor who filed a payout change (or approved it) ending its cooling-off early; F7 a fork with an edit of
 * an account change in its cooling-off; F9 the money ledger naming the person who approved a credit.
 */

interface View {
  status: string;
  activeRunId: string | null;
  checkpointId: string | null;
  messages: { role: string; content?: string; name?: string }[];
  pendingInterrupts: { interruptId: string; action: string; payload?: Record<string, unknown> }[];
  decisions: { interruptId: string; status: string; action: string }[];
  effects: { kind: string; status: string; lastError: string | null }[];
  queuedInputs: { runId: string }[];
  receipts: {
    action: string;
    by: string;
    verified: boolean;
    authorizes: { effect: string; terms: Record<string, unknown>; spent: boolean }[];
  }[];
}

const post = (base: string, path: string, body: unknown, who: Who | { cookie: string }) =>
  typeof who === "string"
    ? authedFetch(
        `${base}${path}`,
        { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) },
        who,
      )
    : fetch(`${base}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", cookie: who.cookie, origin: new URL(base).origin },
        body: JSON.stringify(body),
      });

async function view(base: string, threadId: string): Promise<View> {
  const res = await authedFetch(`${base}/api/threads/${threadId}`, {}, "supervisor");
  if (res.status !== 200) throw new Error(`thread view: ${res.status}`);
  return (await res.json()) as View;
}

/** The thread once nothing runs on it and no input waits to run. */
const settled = (base: string, threadId: string) =>
  until(
    `${threadId} to settle`,
    async () => {
      const v = await view(base, threadId);
      return v.activeRunId === null && v.status !== "running" && v.queuedInputs.length === 0 ? v : undefined;
    },
    60_000,
  );

/** A run of new input or answers, streamed to its end (or refused: its status and code). */
async function run(
  base: string,
  threadId: string,
  who: Who | { cookie: string },
  opts: { message?: string; resume?: unknown[] },
) {
  const res = await post(
    base,
    `/api/threads/${threadId}/runs`,
    runBody(threadId, opts.resume, opts.message),
    who,
  );
  if (res.status !== 200) {
    const text = await res.text();
    const code = res.headers.get("content-type")?.includes("json") ? JSON.parse(text).code : null;
    return { status: res.status, code: code as string | null, events: [] as SseEvent[] };
  }
  const events: SseEvent[] = [];
  if (res.body) await readSseBody(res.body, (e) => events.push(e));
  return { status: 200, code: null, events };
}

const credits = (v: View) => v.effects.filter((e) => e.kind === "payment");

/** An order-support thread about ORD-1002 (Lars Jensen) run to its store-credit review. */
async function creditReviewOn(base: string, message = "My parcel ORD-1002 arrived crushed.") {
  const threadId = await createTicket(base, message, "ORD-1002", "order_support");
  expect((await run(base, threadId, "intake", { message })).status).toBe(200);
  const v = await settled(base, threadId);
  expect(v.pendingInterrupts.map((p) => p.action)).toEqual(["tool_review"]);
  const asked = v.pendingInterrupts[0]!;
  const [call] = (asked.payload?.requests ?? []) as { name: string; args: Record<string, unknown> }[];
  expect(call?.args.orderId).toBe("ORD-1002");
  return { threadId, asked, call: call! };
}

describe.each<Backend>(["postgres", "pglite"])("money goes only where it was approved, on %s", (backend) => {
  let base = "";
  let stop: () => Promise<void> = async () => {};
  beforeAll(async () => {
    ({ base, stop } = await serverOn(backend, "moneybound", {
      // A change of payout account waits an hour after both reviews (a person may end it early).
      ACCOUNT_CHANGE_COOLOFF_MS: "3600000",
    }));
  });
  afterAll(() => stop());

  const creditReview = (message?: string) => creditReviewOn(base, message);
  const edit = (call: { name: string; args: Record<string, unknown> }, args: Record<string, unknown>) => ({
    decisions: [{ type: "edit", editedAction: { name: call.name, args: { ...call.args, ...args } } }],
  });

  test("F1 + F9: an edit may not move a store credit to another customer's order; the ledger names who approved it", async () => {
    const { threadId, asked, call } = await creditReview();
    const before = await view(base, threadId);
    // Through both routes that take an answer: refused with its code, nothing written.
    const viaRun = await run(base, threadId, "operator", {
      resume: [
        { interruptId: asked.interruptId, status: "resolved", payload: edit(call, { orderId: "ORD-1003" }) },
      ],
    });
    expect([viaRun.status, viaRun.code]).toEqual([403, "forbidden:edit_not_allowed"]);
    const viaDecision = await post(
      base,
      `/api/threads/${threadId}/decisions/${asked.interruptId}`,
      { answer: edit(call, { orderId: "ORD-1003", amountCents: 500 }) },
      "operator",
    );
    expect(viaDecision.status).toBe(403);
    expect(((await viaDecision.json()) as { code: string }).code).toBe("forbidden:edit_not_allowed");
    const after = await view(base, threadId);
    expect(after.decisions).toEqual(before.decisions);
    expect(after.effects).toEqual([]);
    expect(after.receipts).toEqual([]);

    // Editing the amount (within the operator's authority) is theirs: the credit is recorded against their receipt.
    const ok = await run(base, threadId, "operator", {
      resume: [
        { interruptId: asked.interruptId, status: "resolved", payload: edit(call, { amountCents: 1500 }) },
      ],
    });
    expect(ok.status).toBe(200);
    const done = await until("the credit delivered", async () => {
      const v = await view(base, threadId);
      return credits(v).some((e) => e.status === "delivered") ? v : undefined;
    });
    expect(credits(done)).toHaveLength(1);
    const [receipt] = done.receipts;
    expect(receipt).toMatchObject({ action: "tool_review", by: "operator@test.local", verified: true });
    expect(receipt?.authorizes).toEqual([
      { effect: "refund", terms: { orderId: "ORD-1002", amountCents: 1500 }, spent: true },
    ]);
  });

  test("F2: a fork that rewrites the customer's words to name another customer's order asks who the sender is", async () => {
    const message = "Refund ORD-1002 please, it broke.";
    const threadId = await createTicket(base, message);
    expect((await run(base, threadId, "intake", { message })).status).toBe(200);
    const paused = await settled(base, threadId);
    expect(paused.pendingInterrupts.map((p) => p.action)).toEqual(["refund_approval"]);
    const fork = await post(
      base,
      `/api/threads/${threadId}/fork`,
      {
        checkpointId: paused.checkpointId,
        values: { customerMessage: "Refund ORD-1003 please, it broke.", orderRef: "ORD-1003" },
        asNode: "classify",
      },
      "supervisor",
    );
    expect(fork.status, await fork.clone().text()).toBe(202);
    const branch = await settled(base, threadId);
    // The edited words are not the customer's: a person checks who the sender is before anything about ORD-1003.
    expect(branch.pendingInterrupts.map((p) => p.action)).toEqual(["select_option"]);
    expect(String(branch.pendingInterrupts[0]?.payload?.title)).toMatch(/^Is the sender /);

    // Even were the sender confirmed and the refund approved, the money would not leave for another customer.
    const identity = branch.pendingInterrupts[0]!;
    expect(
      (
        await run(base, threadId, "admin", {
          resume: [
            {
              interruptId: identity.interruptId,
              status: "resolved",
              payload: { optionId: "sender_is_customer" },
            },
          ],
        })
      ).status,
    ).toBe(200);
    const approval = (await settled(base, threadId)).pendingInterrupts[0]!;
    expect(approval.action).toBe("refund_approval");
    // The branch kept the first order's requested amount: what is left of ORD-1003 is approved instead.
    const left = (approval.payload?.refundable as { amountCents: number } | undefined)?.amountCents ?? 0;
    const approved = await run(base, threadId, "admin", {
      resume: [
        {
          interruptId: approval.interruptId,
          status: "resolved",
          payload: { decision: "approve_partial", amountCents: left, note: "What is left." },
        },
      ],
    });
    expect([approved.status, approved.code]).toEqual([200, null]);
    const held = await until("the refund recorded", async () => {
      const v = await view(base, threadId);
      return credits(v).length > 0 ? v : undefined;
    });
    expect(credits(held).map((e) => [e.status, e.lastError?.split(":").slice(0, 2).join(":")])).toEqual([
      ["failed", "forbidden:destination"],
    ]);
  });

  /** A payout change filed and started by `filer` (a person's session), both reviews approved: in its cooling-off. */
  async function inCoolingOff(filer: Who | { cookie: string }) {
    const message = "Please change my payout account to DE89 3704 0044 0532 0130 00.";
    const res = await post(
      base,
      "/api/threads",
      { message, orderRef: "ORD-1003", agent: "account_change" },
      filer,
    );
    expect(res.status).toBe(201);
    const { threadId } = (await res.json()) as { threadId: string };
    expect((await run(base, threadId, filer, { message })).status).toBe(200);
    const reviews = (await settled(base, threadId)).pendingInterrupts;
    const fraud = reviews.find((p) => p.payload?.review === "fraud")!;
    const data = reviews.find((p) => p.payload?.review === "data")!;
    await post(
      base,
      `/api/threads/${threadId}/decisions/${fraud.interruptId}`,
      { answer: { decision: "approve" } },
      "admin",
    );
    await post(
      base,
      `/api/threads/${threadId}/decisions/${data.interruptId}`,
      { answer: { decision: "approve" } },
      "operator",
    );
    const v = await settled(base, threadId);
    expect(v.pendingInterrupts.map((p) => p.action)).toEqual(["wait_timer"]);
    return { threadId, timer: v.pendingInterrupts[0]!, view: v };
  }

  test("F4: whoever filed a payout change or approved it cannot end its cooling-off early; another supervisor can", async () => {
    const create = async (email: string) => {
      const res = await authedFetch(
        `${base}/api/admin/users`,
        {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ email, name: email, password: TEST_PASSWORD, role: "supervisor" }),
        },
        "admin",
      );
      expect([201, 409]).toContain(res.status);
      return { cookie: await signIn(base, email) };
    };
    const filer = await create(`filer.${backend}@test.local`);
    const other = await create(`other.${backend}@test.local`);
    const { threadId, timer } = await inCoolingOff(filer);
    const fire = (who: Who | { cookie: string }) =>
      post(
        base,
        `/api/threads/${threadId}/decisions/${timer.interruptId}`,
        { answer: { outcome: "fired" } },
        who,
      );
    for (const who of [filer, "admin" as const]) {
      const res = await fire(who);
      expect(res.status).toBe(403);
      expect(((await res.json()) as { code: string }).code).toBe("forbidden:four_eyes_own_thread");
    }
    expect((await view(base, threadId)).pendingInterrupts.map((p) => p.action)).toEqual(["wait_timer"]);
    const ok = await fire(other);
    expect([200, 202]).toContain(ok.status);
    const done = await until("the change applied", async () => {
      const v = await view(base, threadId);
      return v.effects.some((e) => e.kind === "account_update" && e.status === "delivered") ? v : undefined;
    });
    expect(done.receipts.filter((r) => r.action === "wait_timer").map((r) => r.by)).toEqual([
      `other.${backend}@test.local`,
    ]);
  });

  test("F7: a fork with an edit of a change in its cooling-off is refused with a code; the thread and its timer stay", async () => {
    const { threadId, view: before } = await inCoolingOff("intake");
    const res = await post(
      base,
      `/api/threads/${threadId}/fork`,
      {
        checkpointId: before.checkpointId,
        values: { customerMessage: "Please change my payout account to DE44 5001 0517 5407 3249 31." },
      },
      "supervisor",
    );
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(((await res.json()) as { code: string }).code).toBe("conflict:fork_ambiguous");
    const after = await settled(base, threadId);
    expect(after.status).toBe("interrupted");
    expect(after.pendingInterrupts.map((p) => p.action)).toEqual(["wait_timer"]);
    expect(after.decisions.filter((d) => d.action === "wait_timer").map((d) => d.status)).toEqual([
      "pending",
    ]);
  });
});

describe.each<Backend>(["postgres", "pglite"])(
  "recorded effects are facts (double texting, rollback), on %s",
  (backend) => {
    let base = "";
    let stop: () => Promise<void> = async () => {};
    beforeAll(async () => {
      ({ base, stop } = await serverOn(backend, "moneyrb", {
        // The deployment rolls order support back on a newer message; the model takes its time, so one arrives mid-run.
        MULTITASK: "order_support=rollback",
        OFFLINE_TOKEN_DELAY_MS: "150",
      }));
    });
    afterAll(() => stop());
    const creditReview = (message?: string) => creditReviewOn(base, message);

    test("F3: double texting with rollback after a credit was recorded: the agent keeps knowing it, no second credit", async () => {
      // The slow model: the reply after the credit takes a few seconds, the window the second message arrives in.
      const { threadId, asked } = await creditReview("My parcel ORD-1002 arrived crushed, again.");
      const resume = post(
        base,
        `/api/threads/${threadId}/runs`,
        runBody(threadId, [
          {
            interruptId: asked.interruptId,
            status: "resolved",
            payload: { decisions: [{ type: "approve" }] },
          },
        ]),
        "operator",
      ).then(async (res) => {
        if (res.body) await readSseBody(res.body, () => {});
        return res.status;
      });
      await until(
        "the credit recorded",
        async () => credits(await view(base, threadId)).length === 1,
        30_000,
      );
      const second = await post(
        base,
        `/api/threads/${threadId}/runs`,
        runBody(threadId, undefined, "Is ORD-1002 sorted now?"),
        "operator",
      );
      expect([200, 202]).toContain(second.status);
      if (second.body) await readSseBody(second.body, () => {});
      await resume;
      let v = await settled(base, threadId);
      // What the agent knows still holds the recorded credit (the stopped run was not rolled back behind it).
      const creditResults = v.messages.filter(
        (m) => m.role === "tool" && /"recorded":true/.test(m.content ?? ""),
      );
      expect(creditResults).toHaveLength(1);
      // Whatever it proposes next, a second credit for the same order is refused by the ledger.
      for (let step = 0; step < 3 && v.pendingInterrupts.some((p) => p.action === "tool_review"); step++) {
        const again = v.pendingInterrupts.find((p) => p.action === "tool_review")!;
        await run(base, threadId, "admin", {
          resume: [
            {
              interruptId: again.interruptId,
              status: "resolved",
              payload: { decisions: [{ type: "approve" }] },
            },
          ],
        });
        v = await settled(base, threadId);
      }
      expect(credits(v)).toHaveLength(1);
    });
  },
);
