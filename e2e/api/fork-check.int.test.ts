import fc from "fast-check";
import { authedFetch, type Who } from "../support/auth";
import { agentFor, createTicket, runOnce } from "./client";
import { type Backend, serverOn, until } from "./setup";

/*
 * The fork form's checks are the server's (issue 34): `POST …/fork/check` answers what the fork itself would answer
 * for the same edits — 200, or the same 422 with each field's rule in the agent's own words — and writes nothing.
 * Edits are generated (hostile values for every editable field and some that are not); every refused one is sent to
 * the fork too, which must refuse it the same way. So is every other refusal the fork makes before it writes (issue
 * 50): a checkpoint of another thread or none (generated ids), a thread that does not exist, a run in progress — the
 * check answers the fork's status and code, never 200. Both databases.
 */

interface Refusal {
  code: string;
  details?: { fields?: string[]; issues?: { field: string; message: string }[] };
}

const post = (base: string, path: string, body: unknown, who: Who = "supervisor") =>
  authedFetch(
    `${base}${path}`,
    { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) },
    who,
  );

/** Values a fork of a refund thread might be sent: right and wrong types, bounds, formats and fields. */
const hostile = fc.record(
  {
    customerMessage: fc.oneof(fc.string({ maxLength: 20 }), fc.constant(""), fc.integer(), fc.constant(null)),
    orderRef: fc.oneof(
      fc.constantFrom("ORD-1002", "ord-1003", "ORD-12", "1002", ""),
      fc.constant(null),
      fc.boolean(),
    ),
    intent: fc.oneof(fc.constantFrom("refund", "other", "maybe"), fc.integer()),
    reason: fc.oneof(fc.string({ maxLength: 10 }), fc.constant("x".repeat(2001)), fc.constant(null)),
    requested: fc.oneof(
      fc.integer({ min: -5, max: 5 }),
      fc.constantFrom(1.5, 2_147_483_648, 1200),
      fc.constant("lots"),
      fc.constant(null),
    ),
    decision: fc.constant({ decision: "approve" }),
    messages: fc.constant([]),
  },
  { requiredKeys: [] },
);

/** Edits the refund agent takes. */
const valid = fc.record(
  {
    customerMessage: fc.string({ minLength: 1, maxLength: 40 }).filter((t) => t.trim().length > 0),
    orderRef: fc.constantFrom("ORD-1002", "ord-1003", null),
    intent: fc.constantFrom("refund", "other"),
    reason: fc.string({ maxLength: 40 }),
    requested: fc.oneof(fc.integer({ min: 1, max: 100_000 }), fc.constant(null)),
  },
  { requiredKeys: [] },
);
const edits = fc.oneof(valid, hostile);

/** Zod's own wording, which no operator should read: the agents' editable schemas say their rules themselves. */
const ZOD_WORDS = /expected|invalid input|too (small|big)|received/i;

/** The refusal's status and code, or the status alone for an answer that is none. */
async function answer(res: Response): Promise<string> {
  const body = (await res.json().catch(() => ({}))) as { code?: string };
  return `${res.status} ${body.code ?? ""}`.trim();
}

interface ThreadView {
  checkpointId: string;
  activeRunId: string | null;
}

describe.each<Backend>(["postgres", "pglite"])("the fork's checks, asked alone, on %s", (backend) => {
  let base = "";
  let stop: () => Promise<void> = async () => {};
  let threadId = "";
  let checkpointId = "";
  const view = async (id: string) =>
    (await (await authedFetch(`${base}/api/threads/${id}`, {}, "supervisor")).json()) as ThreadView;
  const ticket = async () => {
    const message = "Refund ORD-1002 please, it arrived broken.";
    const id = await createTicket(base, message);
    await runOnce(agentFor(base, id), { message });
    return { id, checkpointId: (await view(id)).checkpointId };
  };
  /** What the threads' histories and the audit trail say: a check that wrote anything changes it. */
  const written = async (ids: string[]) =>
    JSON.stringify(
      await Promise.all([
        ...ids.map(async (id) =>
          (await authedFetch(`${base}/api/threads/${id}/history`, {}, "supervisor")).json(),
        ),
        (await authedFetch(`${base}/api/audit?limit=200`, {}, "supervisor")).json(),
      ]),
    );
  beforeAll(async () => {
    // The offline model takes its time per token, so a run is still working while a test asks about it.
    ({ base, stop } = await serverOn(backend, "forkcheck", { OFFLINE_TOKEN_DELAY_MS: "40" }));
    ({ id: threadId, checkpointId } = await ticket());
  });
  afterAll(() => stop());

  test("answers what the fork would, in the agent's words, and writes nothing", async () => {
    const history = async () =>
      JSON.stringify(
        await (await authedFetch(`${base}/api/threads/${threadId}/history`, {}, "supervisor")).json(),
      );
    const before = await history();
    let refused = 0;
    let accepted = 0;
    for (const values of fc.sample(edits, 40)) {
      const body = { checkpointId, values };
      const check = await post(base, `/api/threads/${threadId}/fork/check`, body);
      if (check.status === 200) {
        expect(await check.json()).toEqual({ ok: true });
        accepted += 1;
        continue;
      }
      expect(check.status, JSON.stringify(values)).toBe(422);
      const said = (await check.json()) as Refusal;
      expect(said.code).toBe("unprocessable:fork_values");
      for (const issue of said.details?.issues ?? []) {
        expect(issue.message, `${issue.field}: ${issue.message}`).not.toMatch(ZOD_WORDS);
      }
      // The fork itself refuses it the same way (and so writes nothing either).
      const fork = await post(base, `/api/threads/${threadId}/fork`, body);
      expect(fork.status).toBe(422);
      const forkSaid = (await fork.json()) as Refusal;
      expect(forkSaid.code).toBe(said.code);
      expect(forkSaid.details?.issues).toEqual(said.details?.issues);
      refused += 1;
    }
    expect(refused).toBeGreaterThan(0);
    expect(accepted).toBeGreaterThan(0);
    expect(await history()).toBe(before);
  });

  test("names each broken field with its rule; a node a fork may not continue as is refused; only supervisors ask", async () => {
    const check = (body: unknown, who?: Who) => post(base, `/api/threads/${threadId}/fork/check`, body, who);
    const res = await check({
      checkpointId,
      values: { requested: 0, orderRef: "ORD-12", decision: "approve" },
    });
    expect(res.status).toBe(422);
    const said = (await res.json()) as Refusal;
    expect(said.details?.issues).toEqual(
      expect.arrayContaining([
        { field: "requested", message: "must be more than 0" },
        { field: "orderRef", message: "must look like ORD-1234" },
        { field: "decision", message: "cannot be edited by a fork" },
      ]),
    );
    // An amount beyond what was paid (ORD-1002: €249.00) is refused with the order's total, by the check and the fork.
    for (const path of ["fork/check", "fork"]) {
      const tooMuch = await post(base, `/api/threads/${threadId}/${path}`, {
        checkpointId,
        values: { requested: 99_999_999 },
      });
      expect(tooMuch.status, path).toBe(422);
      expect(((await tooMuch.json()) as Refusal).details?.issues).toEqual([
        { field: "requested", message: "must be at most the order's total, €249.00" },
      ]);
    }
    expect((await check({ checkpointId, values: { requested: 24_900 } })).status).toBe(200);
    const node = await check({ checkpointId, values: { reason: "ok" }, asNode: "human_review" });
    expect(node.status).toBe(422);
    expect(((await node.json()) as Refusal).code).toBe("unprocessable:fork_node");
    expect((await check({ checkpointId, values: { reason: "ok" } })).status).toBe(200);
    expect((await check({ checkpointId, values: { reason: "ok" } }, "operator")).status).toBe(403);
  });

  test("a checkpoint of another thread or of none, a thread that does not exist: the check answers as the fork", async () => {
    const other = await ticket();
    const before = await written([threadId, other.id]);
    // Ids the fork finds in no thread of this one: generated (the body's schema allows 1 to 200 characters).
    const unknown = fc.sample(
      fc.oneof(
        fc.string({ minLength: 1, maxLength: 200 }),
        fc.uuid(),
        fc.constantFrom(other.checkpointId.toUpperCase(), `${checkpointId} `, checkpointId.slice(0, -1)),
      ),
      { seed: 50, numRuns: 12 },
    );
    const cases: { path: string; body: Record<string, unknown> }[] = [
      // Another thread's checkpoint, bare and with edits the fork would take.
      { path: threadId, body: { checkpointId: other.checkpointId } },
      { path: threadId, body: { checkpointId: other.checkpointId, values: { reason: "ok" } } },
      { path: other.id, body: { checkpointId } },
      ...unknown.map((id) => ({ path: threadId, body: { checkpointId: id } })),
      // No such thread: the checkpoint is one of a real thread.
      { path: crypto.randomUUID(), body: { checkpointId } },
    ];
    for (const { path, body } of cases) {
      const check = await answer(await post(base, `/api/threads/${path}/fork/check`, body));
      const fork = await answer(await post(base, `/api/threads/${path}/fork`, body));
      expect([body, check]).toEqual([body, fork]);
      expect([body, fork]).toEqual([body, expect.stringMatching(/^404 not_found:(checkpoint|thread)$/)]);
    }
    expect(await written([threadId, other.id])).toBe(before);
  });

  test("a run in progress: the check answers the fork's 409", async () => {
    const message = "Refund ORD-1003 please, it never arrived.";
    const id = await createTicket(base, message);
    // Fork the thread from its own first checkpoint while its first run still works.
    const running = runOnce(agentFor(base, id), { message });
    const active = await until("the run to be active with a checkpoint", async () => {
      const now = await view(id);
      return now.activeRunId && now.checkpointId ? now : undefined;
    });
    const body = { checkpointId: active.checkpointId };
    const check = await answer(await post(base, `/api/threads/${id}/fork/check`, body));
    const fork = await answer(await post(base, `/api/threads/${id}/fork`, body));
    const still = (await view(id)).activeRunId;
    await running;
    // Only a comparison made while the run was active says anything; the slow offline model keeps it so.
    expect(still).toBe(active.activeRunId);
    expect([check, fork]).toEqual(["409 conflict:run_active", "409 conflict:run_active"]);
  });
});
