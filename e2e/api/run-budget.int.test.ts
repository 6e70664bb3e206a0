import fc from "fast-check";
import { authedFetch, emailOf } from "../support/auth";
import { agentFor, createTicket, runOnce } from "./client";
import { type Backend, type Sql, serverOn } from "./setup";
import { postDecision, settledView, threadView } from "./thread-api";

/*
 * Spending limits (issue 32): a run past its token budget pauses at its next model call with a `run_budget` question —
 * a decision like any other, through the ledger, the claim and the audit trail. Raising the limit lets the run go on
 * from there; stopping it ends the run as stopped with no model call after. Any agent: the refund agent (the thread's
 * limit, reached by its reply writer after the approval) and order support (a createAgent loop, reached by its second
 * model call). A real server on both databases (the embedded one through the API only).
 */

const ENV = {
  // One token per thread: the first model call of a thread goes out, every later one finds the limit reached.
  THREAD_TOKEN_BUDGET: "1",
  RUN_TOKEN_BUDGET: "0",
  OFFLINE_TOKEN_DELAY_MS: "0",
};

interface Pending {
  interruptId: string;
  action: string;
  payload: Record<string, unknown>;
}
interface View {
  status: string;
  activeRunId: string | null;
  pendingInterrupts: Pending[];
  failure?: { code: string; message: string } | null;
}

const view = (base: string, threadId: string) => threadView<View>(base, threadId);
const settled = (base: string, threadId: string) => settledView<View>(base, threadId);
const decide = postDecision;

/** Answers a budget question must refuse (422, nothing written): generated around what was spent. */
function badAnswers(used: number) {
  return fc.oneof(
    fc.record({ decision: fc.constant("raise"), to: fc.integer({ min: -5, max: used }) }),
    fc.record({
      decision: fc.constant("raise"),
      to: fc.double({ min: used + 0.01, max: used + 1000, noInteger: true }),
    }),
    fc.record({ decision: fc.constant("raise"), to: fc.integer({ min: 1_000_000_001, max: 2 ** 40 }) }),
    fc.record({ decision: fc.constant("raise"), to: fc.constant(used + 10), extra: fc.string() }),
    fc.record({ decision: fc.constant("stop"), note: fc.constantFrom("", "   ") }),
    fc.record({ decision: fc.string().filter((d) => d !== "raise" && d !== "stop") }),
  );
}

describe.each<Backend>(["postgres", "pglite"])("spending limits on %s", (backend) => {
  let base = "";
  let sql: Sql | null = null;
  let stop: () => Promise<void> = async () => {};
  beforeAll(async () => {
    ({ base, sql, stop } = await serverOn(backend, "budget", ENV));
  });
  afterAll(() => stop());

  test("refund: the reply writer waits at the thread's limit; bad answers are refused; a raise goes on", async () => {
    const message = "Refund ORD-1002 please, it arrived broken.";
    const threadId = await createTicket(base, message);
    const first = await runOnce(agentFor(base, threadId), { message });
    expect(first.interrupts.map((i) => i.reason)).toEqual(["refund_approval"]);
    const approval = first.interrupts[0]?.id as string;
    expect((await decide(base, threadId, approval, { decision: "approve" }, "supervisor")).status).toBe(202);

    // The resumed run's model call (the reply) finds the thread's one token spent: it asks instead of calling.
    const paused = await settled(base, threadId);
    expect(paused.pendingInterrupts.map((p) => p.action)).toEqual(["run_budget"]);
    const [budget] = paused.pendingInterrupts as [Pending];
    const used = budget.payload.used as number;
    expect(budget.payload).toMatchObject({
      action: "run_budget",
      limit: "thread_tokens",
      budget: 1,
      spent: { threadTokens: used },
    });
    expect(used).toBeGreaterThan(1);
    if (sql) {
      // What the first run spent is on its row: the thread's limit adds it up.
      const [row] = await sql.rows<{ tokens: number }>(
        "SELECT sum(tokens_in + tokens_out)::int AS tokens FROM runs WHERE thread_id = $1",
        [threadId],
      );
      expect(row?.tokens).toBe(used);
    }

    // Hostile answers: refused with a stable code, the question still waits, nobody is recorded as its decider.
    for (const answer of fc.sample(badAnswers(used), 12)) {
      const res = await decide(base, threadId, budget.interruptId, answer, "operator");
      expect(res.status, JSON.stringify(answer)).toBe(422);
      expect(((await res.json()) as { code: string }).code).toBe("unprocessable:answer");
    }
    // A viewer may not answer at all.
    expect(
      (await decide(base, threadId, budget.interruptId, { decision: "raise", to: used + 1 }, "viewer"))
        .status,
    ).toBe(403);
    const still = await view(base, threadId);
    expect(still.pendingInterrupts.map((p) => p.interruptId)).toEqual([budget.interruptId]);

    // An operator raises the thread's limit: the run goes on from the model call and asks its next question.
    const raise = { decision: "raise", to: 1_000_000, note: "A long reply is fine." };
    expect((await decide(base, threadId, budget.interruptId, raise, "operator")).status).toBe(202);
    const next = await settled(base, threadId);
    expect(next.pendingInterrupts.map((p) => p.action)).toEqual(["confirm_email"]);
    const email = next.pendingInterrupts[0] as Pending;
    expect(String(email.payload.body)).toContain("ORD-1002");
    expect((await decide(base, threadId, email.interruptId, { choice: "send" }, "supervisor")).status).toBe(
      202,
    );
    expect((await settled(base, threadId)).status).toBe("completed");

    // The ledger and the audit trail name who answered the budget question, and with what.
    const audit = (await (
      await authedFetch(`${base}/api/audit?action=decision&threadId=${threadId}`, {}, "viewer")
    ).json()) as { items: { actor: string; interruptId: string; answer: unknown }[] };
    expect(audit.items.find((i) => i.interruptId === budget.interruptId)).toMatchObject({
      actor: emailOf("operator"),
      answer: raise,
    });
  });

  test("order support: the agent loop waits at its second model call; a stop ends the run with no call after; Try again asks again", async () => {
    const message = "My order ORD-1002 arrived scratched.";
    const threadId = await createTicket(base, message, "ORD-1002", "order_support");
    const first = await runOnce(agentFor(base, threadId), { message });
    expect(first.interrupts.map((i) => i.reason)).toEqual(["run_budget"]);
    const paused = await settled(base, threadId);
    const [budget] = paused.pendingInterrupts as [Pending];
    expect(budget.payload).toMatchObject({ limit: "thread_tokens", budget: 1 });
    expect(typeof budget.payload.node).toBe("string");

    const stopAnswer = { decision: "stop", note: "The agent is going round in circles." };
    expect((await decide(base, threadId, budget.interruptId, stopAnswer, "operator")).status).toBe(202);
    const ended = await settled(base, threadId);
    expect(ended.status).toBe("stopped");
    // The graph still stands at the question, answered in the ledger: answering it again is refused (a retry stops
    // again there; a fork from an earlier step goes another way).
    expect(ended.pendingInterrupts.map((p) => p.interruptId)).toEqual([budget.interruptId]);
    const again = await decide(
      base,
      threadId,
      budget.interruptId,
      { decision: "raise", to: 1_000_000 },
      "supervisor",
    );
    expect(again.status).toBe(409);
    expect(((await again.json()) as { code: string }).code).toBe("conflict:interrupt_resolved");
    expect(ended.failure).toMatchObject({
      code: "conflict:run_cancelled",
      message: `Stopped by ${emailOf("operator")}, at the spending limit.`,
    });
    if (sql) {
      // The stopped run sent nothing to the model: no tokens on its row, and no store credit was proposed.
      const rows = await sql.rows<{ status: string; tokens: number }>(
        "SELECT status, tokens_in + tokens_out AS tokens FROM runs WHERE thread_id = $1 ORDER BY created_at",
        [threadId],
      );
      expect(rows.map((r) => r.status)).toEqual(["interrupted", "cancelled"]);
      expect(rows[1]?.tokens).toBe(0);
    }

    // Try again: the stop does not replay; the thread is still past its limit, so it is asked again — a new question.
    const retry = await runOnce(agentFor(base, threadId), { as: "supervisor" });
    expect(retry.interrupts.map((i) => i.reason)).toEqual(["run_budget"]);
    expect(retry.interrupts[0]?.id).not.toBe(budget.interruptId);
    const again2 = await settled(base, threadId);
    expect(again2.status).toBe("interrupted");
    expect(again2.pendingInterrupts.map((p) => p.action)).toEqual(["run_budget"]);
  });
});
