import { chromium } from "@playwright/test";
import { openThreadJson } from "@/lib/db/vault";
import { agentFor, createTicket, runOnce, type sqlFor } from "../api/client";
import { cleanUp, prepareDatabase, startTestServer } from "../api/setup";
import { waitForEffectsToSettle } from "../chaos/effects";
import { GUIDE_FLOWS, runGuideFlow, runGuideIntake } from "../guide/flows";
import { authedFetch, authHeaders, type Who } from "../support/auth";
import { type FakePaymentProvider, startFakePaymentProvider } from "../support/fake-payment";
import type { TestServer } from "../support/server";
import { startTestSmtpServer, type TestSmtpServer } from "../support/smtp";
import { buildUpgradeTree } from "./tree";

/*
 * A deploy onto paused threads, with two real builds of the app against one database: v1 (this tree) and v2 (the
 * same app after a developer renamed the approval node, added a node after it, added a state field with a default,
 * changed a prompt and declared a migration; goodwill 1 retired without one — see tree.ts). Threads paused at each
 * interrupt kind under v1 must end correctly under v2 — on v1 by pinning, or on v2 by the migration — with every
 * refund paid once at the provider and every reply delivered once at the SMTP server. `npm run test:upgrade` runs it
 * with 50 threads per kind; `npm test` with a few.
 */

const PER_KIND = Number(process.env.UPGRADE_THREADS_PER_KIND ?? 3);
const GOODWILL = Math.min(PER_KIND, 3);
const KINDS = ["ask_order", "human_review", "choose_method", "confirm_email"] as const;
type Kind = (typeof KINDS)[number];

/** Run `work` over `items`, `width` at a time. */
async function inBatches<T, R>(
  items: T[],
  width: number,
  work: (item: T, i: number) => Promise<R>,
): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += width) {
    out.push(...(await Promise.all(items.slice(i, i + width).map((item, j) => work(item, i + j)))));
  }
  return out;
}

async function until<T>(
  what: string,
  read: () => Promise<T>,
  ok: (v: T) => boolean,
  ms = 60_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

interface Case {
  kind: Kind | "goodwill";
  threadId: string;
  orderId: string;
  customerEmail: string;
}

/** The v2 build, shared by every scenario of the file. */
let tree: ReturnType<typeof buildUpgradeTree> | undefined;
beforeAll(() => {
  tree = buildUpgradeTree();
}, 900_000);
afterAll(() => {
  if (!process.env.UPGRADE_V2_DIR) tree?.remove();
});

/** The world around both builds: one database, one payment provider, one SMTP server. */
function useWorld(prefix: string) {
  const world = {
    prepared: undefined as unknown as Awaited<ReturnType<typeof prepareDatabase>>,
    provider: undefined as unknown as FakePaymentProvider,
    smtp: undefined as unknown as TestSmtpServer,
    servers: [] as TestServer[],
    sql: () => world.prepared.sql,
    env: () => ({
      PAYMENT_URL: world.provider.url,
      SMTP_URL: world.smtp.url,
      EFFECT_POLL_MS: "100",
      EFFECT_RETRY_BASE_MS: "50",
      EFFECT_RETRY_MAX_MS: "200",
      RUN_SWEEP_INTERVAL_MS: "500",
    }),
    async start(version: 1 | 2): Promise<{ server: TestServer; instance: string }> {
      const before = new Set(
        (await world.sql().rows<{ id: string }>("SELECT id FROM instances")).map((r) => r.id),
      );
      const server = await startTestServer({
        databaseUrl: world.prepared.url,
        // The v2 tree is built into its default .next, whatever NEXT_DIST_DIR this run's own build uses.
        ...(version === 2
          ? { cwd: tree?.dir, env: { ...world.env(), NEXT_DIST_DIR: "" } }
          : { env: world.env() }),
      });
      world.servers.push(server);
      const ids = (await world.sql().rows<{ id: string }>("SELECT id FROM instances")).map((r) => r.id);
      const instance = ids.find((id) => !before.has(id));
      if (!instance) throw new Error("the new server registered no instance");
      return { server, instance };
    },
  };
  beforeAll(async () => {
    world.prepared = await prepareDatabase(prefix, { prefix: "ORD-7", count: PER_KIND * 4 + GOODWILL * 2 });
    // The choose_method threads need orders paid by bank transfer (version 1 asks how to refund those).
    await world.sql().rows(
      `UPDATE orders SET payment_method = 'bank_transfer' WHERE id LIKE 'ORD-7%'
         AND substring(id from 6)::int BETWEEN $1 AND $2`,
      [PER_KIND * 2, PER_KIND * 3 - 1],
    );
    world.provider = await startFakePaymentProvider();
    world.smtp = await startTestSmtpServer();
  }, 900_000);
  afterAll(async () => {
    await cleanUp(world.servers, world.prepared);
    await world.provider?.close();
    await world.smtp?.close();
  });
  return world;
}

const order = (n: number) => `ORD-7${String(n).padStart(3, "0")}`;
const emailOfOrder = (n: number) => `customer${n}@example.com`;

/** The open decisions of a thread, from the ledger (each question opened: it is sealed under the thread's key). */
async function pendingOf(sql: ReturnType<typeof sqlFor>, threadId: string) {
  const rows = await sql.rows<{ interrupt_id: string; action: string; payload: unknown }>(
    "SELECT interrupt_id, action, payload FROM decisions WHERE thread_id = $1 AND status = 'pending' ORDER BY created_at",
    [threadId],
  );
  return Promise.all(
    rows.map(async (r) => ({ ...r, payload: await openThreadJson(sql, threadId, r.payload) })),
  );
}

/** Answer one decision through the per-card endpoint: the status and the error code, if any. */
async function decide(base: string, threadId: string, interruptId: string, answer: unknown, who: Who) {
  const res = await authedFetch(
    `${base}/api/threads/${threadId}/decisions/${interruptId}`,
    { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ answer }) },
    who,
  );
  const body = (await res.json().catch(() => ({}))) as { code?: string; details?: { migrating?: boolean } };
  return { status: res.status, code: body.code, migrating: body.details?.migrating === true };
}

/** What an operator answers to each kind of question (the order number is given by an operator, the rest by a supervisor). */
function answerFor(action: string, c: Case, payload?: unknown): { answer: unknown; who: Who } {
  switch (action) {
    case "input_text":
      return { answer: { text: c.orderId }, who: "operator" };
    case "refund_approval":
      return { answer: { decision: "approve" }, who: "supervisor" };
    case "select_option": {
      // The refund method, or — for an order number typed by the operator — whether the sender is its customer.
      const offered = ((payload as { options?: { id: string }[] } | null)?.options ?? []).map((o) => o.id);
      const optionId = offered.includes("sender_is_customer") ? "sender_is_customer" : "original_payment";
      return { answer: { optionId }, who: "supervisor" };
    }
    case "confirm_email":
      return { answer: { choice: "send" }, who: "supervisor" };
    case "goodwill_voucher":
      return { answer: { decision: "grant" }, who: "supervisor" };
    default:
      throw new Error(`no answer for ${action}`);
  }
}

/**
 * Answer a thread's questions until it completes, through `pick(i)`'s server for the i-th answer. A refusal other
 * than "the thread is moving to a new version" fails the test.
 */
async function driveToEnd(
  sql: ReturnType<typeof sqlFor>,
  c: Case,
  pick: (i: number) => string,
): Promise<void> {
  for (let i = 0; i < 40; i++) {
    const [thread] = await sql.rows<{ status: string }>("SELECT status FROM threads WHERE id = $1", [
      c.threadId,
    ]);
    if (thread?.status === "completed") return;
    if (thread?.status === "failed" || thread?.status === "needs_attention") {
      throw new Error(`thread ${c.threadId} (${c.kind}) is ${thread.status}`);
    }
    const [open] = await pendingOf(sql, c.threadId);
    const active = await sql.count("runs", "thread_id = $1 AND status IN ('queued', 'running')", [
      c.threadId,
    ]);
    if (!open || active > 0 || thread?.status !== "interrupted") {
      await new Promise((r) => setTimeout(r, 150));
      continue;
    }
    const { answer, who } = answerFor(open.action, c, open.payload);
    const result = await decide(pick(i), c.threadId, open.interrupt_id, answer, who);
    if (result.status >= 400 && !result.migrating && result.code !== "conflict:run_active") {
      throw new Error(`thread ${c.threadId} (${c.kind}) ${open.action}: ${result.status} ${result.code}`);
    }
  }
  throw new Error(`thread ${c.threadId} (${c.kind}) did not complete`);
}

/** Create the threads under v1 and bring each to its kind's question. */
async function pauseUnderV1(
  base: string,
  sql: ReturnType<typeof sqlFor>,
  kinds: readonly Kind[],
  goodwill: number,
) {
  const plan: { kind: Case["kind"]; n: number }[] = [];
  kinds.forEach((kind, k) => {
    for (let i = 0; i < PER_KIND; i++) plan.push({ kind, n: k * PER_KIND + i });
  });
  for (let i = 0; i < goodwill; i++) plan.push({ kind: "goodwill", n: PER_KIND * 4 + i });
  return inBatches(plan, 8, async ({ kind, n }): Promise<Case> => {
    const c = { kind, orderId: order(n), customerEmail: emailOfOrder(n), threadId: "" };
    const message =
      kind === "ask_order"
        ? "Please refund my television, it broke after two days."
        : kind === "goodwill"
          ? `The delivery of ${c.orderId} was two weeks late.`
          : `Refund ${c.orderId} please, it broke.`;
    c.threadId = await createTicket(
      base,
      message,
      kind === "goodwill" ? c.orderId : undefined,
      kind === "goodwill" ? "goodwill" : undefined,
    );
    await runOnce(agentFor(base, c.threadId), { message, as: "intake" });
    const want = {
      ask_order: "input_text",
      human_review: "refund_approval",
      choose_method: "select_option",
      confirm_email: "confirm_email",
      goodwill: "goodwill_voucher",
    }[kind];
    for (let step = 0; step < 4; step++) {
      const [open] = await until(
        "a question",
        () => pendingOf(sql, c.threadId),
        (p) =>
          p.length > 0 &&
          // wait for the run to settle before reading
          true,
      );
      if (open?.action === want) return c;
      const { answer, who } = answerFor(open!.action, c, open!.payload);
      const r = await decide(base, c.threadId, open!.interrupt_id, answer, who);
      if (r.status >= 400)
        throw new Error(`pausing ${c.threadId} at ${kind}: ${open!.action} ${r.status} ${r.code}`);
      await until(
        "the next question",
        () => pendingOf(sql, c.threadId),
        (p) => p.length > 0 && p[0]!.interrupt_id !== open!.interrupt_id,
      );
    }
    throw new Error(`thread ${c.threadId} never reached ${kind}`);
  });
}

/** Every refund paid once and every reply delivered once, counted where they landed. */
async function expectEffectsOnce(world: ReturnType<typeof useWorld>, cases: Case[]) {
  await waitForEffectsToSettle(world.sql(), 60_000);
  const refunds = cases.filter((c) => c.kind !== "goodwill");
  const paid = new Map<string, number>();
  for (const p of world.provider.created) paid.set(p.orderId, (paid.get(p.orderId) ?? 0) + 1);
  const mailed = new Map<string, number>();
  for (const m of world.smtp.received) for (const to of m.to) mailed.set(to, (mailed.get(to) ?? 0) + 1);
  const wrongPayments = refunds
    .filter((c) => paid.get(c.orderId) !== 1)
    .map((c) => [c.kind, c.orderId, paid.get(c.orderId) ?? 0]);
  const wrongMail = refunds
    .filter((c) => mailed.get(c.customerEmail) !== 1)
    .map((c) => [c.kind, c.customerEmail, mailed.get(c.customerEmail) ?? 0]);
  expect(wrongPayments).toEqual([]);
  expect(wrongMail).toEqual([]);
  // Each payment is the approved amount: the whole €500.00 order.
  expect(world.provider.created.filter((p) => p.amountCents !== 50_000)).toEqual([]);
  return { payments: world.provider.created.length, emails: world.smtp.received.length };
}

describe("upgrade: v1 stopped, v2 started on threads paused at every kind of question", () => {
  const world = useWorld("upgrade");
  let cases: Case[] = [];

  it("pins, migrates or flags every paused thread, and each ends correctly with its effects once", async () => {
    const v1 = await world.start(1);
    const sql = world.sql();
    cases = await pauseUnderV1(v1.server.url, sql, KINDS, GOODWILL);
    // Account changes (two parallel reviews each, on version 2), whose version 3 declares a migration that fails.
    const accountChanges = await inBatches(
      Array.from({ length: GOODWILL }, (_, i) => order(PER_KIND * 4 + GOODWILL + i)),
      8,
      async (orderId) => {
        const message = "Please change my payout account to DE89 3704 0044 0532 0130 00.";
        const threadId = await createTicket(v1.server.url, message, orderId, "account_change");
        const run = await runOnce(agentFor(v1.server.url, threadId), { message, as: "intake" });
        expect(run.interrupts).toHaveLength(2);
        return threadId;
      },
    );
    console.log(
      `[upgrade] ${cases.length + accountChanges.length} threads paused under v1 (${PER_KIND} per refund kind, ` +
        `${GOODWILL} goodwill, ${GOODWILL} account changes)`,
    );
    await v1.server.stop();

    const v2 = await world.start(2);
    const base = v2.server.url;
    const of = (kind: Case["kind"]) => cases.filter((c) => c.kind === kind);
    const ids = (kind: Case["kind"]) => of(kind).map((c) => c.threadId);

    // The migration moves the threads waiting at the renamed node (once each), and asks their approval again.
    const migrated = await until(
      "the migrations",
      () =>
        sql.rows<{ id: string }>(
          `SELECT t.id FROM threads t WHERE t.id = ANY($1) AND t.agent_version = '2' AND t.status = 'interrupted'
             AND EXISTS (SELECT 1 FROM decisions d WHERE d.thread_id = t.id AND d.status = 'pending' AND d.action = 'refund_approval')`,
          [ids("human_review")],
        ),
      (rows) => rows.length === PER_KIND,
      60_000 + PER_KIND * 2_000,
    );
    expect(migrated).toHaveLength(PER_KIND);
    expect(await sql.count("runs", "thread_id = ANY($1) AND kind = 'migration'", [ids("human_review")])).toBe(
      PER_KIND,
    );
    expect(
      await sql.count("checkpoint.checkpoints", "thread_id = ANY($1) AND metadata->>'source' = 'migration'", [
        ids("human_review"),
      ]),
    ).toBe(PER_KIND);
    expect(
      await sql.count("audit_log", "thread_id = ANY($1) AND action = 'thread_migrated'", [
        ids("human_review"),
      ]),
    ).toBe(PER_KIND);
    expect(
      await sql.count(
        "decisions",
        "thread_id = ANY($1) AND status = 'superseded' AND action = 'refund_approval'",
        [ids("human_review")],
      ),
    ).toBe(PER_KIND);
    // The others stay pinned to version 1.
    const pinned = [...ids("ask_order"), ...ids("choose_method"), ...ids("confirm_email")];
    const stayed = await sql.rows<{ id: string; agent_version: string; status: string; detail: unknown }>(
      `SELECT t.id, t.agent_version, t.status, a.detail FROM threads t
         LEFT JOIN audit_log a ON a.thread_id = t.id AND a.action = 'thread_migrated' WHERE t.id = ANY($1)`,
      [pinned],
    );
    expect(stayed.filter((t) => t.agent_version !== "1" || t.status !== "interrupted")).toEqual([]);

    // Goodwill 1 is gone with no migration: refused with the versions named, marked, and said so in the API.
    for (const c of of("goodwill")) {
      const [open] = await pendingOf(sql, c.threadId);
      const refused = await decide(base, c.threadId, open!.interrupt_id, { decision: "grant" }, "supervisor");
      expect(refused).toMatchObject({ status: 409, code: "conflict:graph_version" });
      const view = (await (await authedFetch(`${base}/api/threads/${c.threadId}`)).json()) as {
        status: string;
        attention: { reason: string; currentVersion: string };
      };
      expect(view.status).toBe("needs_attention");
      expect(view.attention).toMatchObject({ currentVersion: "2" });
      expect(view.attention.reason).toContain("version 1");
      expect(await sql.count("runs", "thread_id = $1 AND agent_key = 'goodwill@2'", [c.threadId])).toBe(0);
    }

    // Account change 3's migration fails: each thread waits for a supervisor, the audit trail says why, nothing ran.
    await until(
      "the failed migrations",
      () => sql.count("threads", "id = ANY($1) AND status = 'needs_attention'", [accountChanges]),
      (n) => n === accountChanges.length,
    );
    expect(
      await sql.count("audit_log", "thread_id = ANY($1) AND action = 'migration_failed'", [accountChanges]),
    ).toBe(accountChanges.length);
    expect(await sql.count("runs", "thread_id = ANY($1) AND kind = 'migration'", [accountChanges])).toBe(0);
    const failed = accountChanges[0]!;
    const failedView = (await (await authedFetch(`${base}/api/threads/${failed}`)).json()) as {
      attention: { reason: string; canMigrate: boolean };
    };
    expect(failedView.attention.canMigrate).toBe(true);
    expect(failedView.attention.reason).toContain("migration to version 3 failed");
    const [review] = await pendingOf(sql, failed);
    expect(
      await decide(base, failed, review!.interrupt_id, { decision: "approve" }, "supervisor"),
    ).toMatchObject({
      status: 409,
      code: "conflict:graph_version",
    });
    const retry = await authedFetch(`${base}/api/threads/${failed}/migrate`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(retry.status).toBe(409);
    expect(((await retry.json()) as { code: string }).code).toBe("conflict:graph_version");

    // History pages of v1 threads still render (pinned, migrated and retired alike).
    for (const c of [of("confirm_email")[0]!, of("human_review")[0]!, of("goodwill")[0]!]) {
      const api = await authedFetch(`${base}/api/threads/${c.threadId}/history`);
      expect(api.status).toBe(200);
      const page = await authedFetch(`${base}/threads/${c.threadId}/history`);
      expect(page.status).toBe(200);
    }

    // Resume everything that can be: each refund thread ends completed.
    const refunds = cases.filter((c) => c.kind !== "goodwill");
    await inBatches(refunds, 8, (c) => driveToEnd(sql, c, () => base));
    expect(
      await sql.count("threads", "id = ANY($1) AND status = 'completed'", [refunds.map((c) => c.threadId)]),
    ).toBe(refunds.length);
    // 0 lost decisions: nothing waits in the ledger; 0 silently completed: every thread's approval was taken.
    expect(
      await sql.count("decisions", "thread_id = ANY($1) AND status IN ('pending', 'answered')", [
        refunds.map((c) => c.threadId),
      ]),
    ).toBe(0);
    expect(
      await sql.count(
        "threads t",
        "t.id = ANY($1) AND NOT EXISTS (SELECT 1 FROM decisions d WHERE d.thread_id = t.id AND d.action = 'refund_approval' AND d.status = 'resolved')",
        [refunds.map((c) => c.threadId)],
      ),
    ).toBe(0);
    // Where each ended: threads past the approval stayed on version 1 throughout; those at it were migrated, and
    // so were those asked for their order number once they reached it — each once, and they ran version 2's new
    // node (it sets the new field).
    const pastApproval = [...ids("choose_method"), ...ids("confirm_email")];
    expect(await sql.count("runs", "thread_id = ANY($1) AND agent_key <> 'refund@1'", [pastApproval])).toBe(
      0,
    );
    const movedLater = ids("ask_order");
    expect(await sql.count("runs", "thread_id = ANY($1) AND kind = 'migration'", [movedLater])).toBe(
      PER_KIND,
    );
    expect(
      await sql.count("audit_log", "thread_id = ANY($1) AND action = 'thread_migrated'", [
        [...movedLater, ...ids("human_review")],
      ]),
    ).toBe(2 * PER_KIND);
    const priority = async (c: Case) =>
      (
        (await (await authedFetch(`${base}/api/threads/${c.threadId}`)).json()) as {
          values: { priority?: string };
        }
      ).values.priority ?? null;
    const migratedCases = [...of("human_review"), ...of("ask_order")];
    expect(await Promise.all(migratedCases.map(priority))).toEqual(migratedCases.map(() => "high"));
    expect(await Promise.all(of("confirm_email").map(priority))).toEqual(of("confirm_email").map(() => null));
    const counts = await expectEffectsOnce(world, refunds);
    console.log(
      `[upgrade] ${refunds.length} refund threads completed (${2 * PER_KIND} migrated, ${pastApproval.length} pinned ` +
        "to the end), " +
        `${counts.payments} payments, ${counts.emails} emails, ${GOODWILL} retired-version threads need attention`,
    );

    // And the browser says it too.
    const browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    });
    try {
      // Signed in as a supervisor: the session cookie the API helpers use, sent with every request of the page.
      const context = await browser.newContext({
        baseURL: base,
        extraHTTPHeaders: await authHeaders(base, "supervisor"),
      });
      const page = await context.newPage();
      await page.goto(`/threads/${of("goodwill")[0]!.threadId}`);
      const panel = page.getByTestId("attention-panel");
      await panel.waitFor({ timeout: 20_000 });
      expect(await panel.textContent()).toContain("version 1");
      expect(await page.getByTestId("status-badge").textContent()).toBe("Needs a supervisor");
    } finally {
      await browser.close();
    }
  }, 900_000);
});

describe("rolling: v1 and v2 serve one database at once", () => {
  const world = useWorld("rolling");

  it("claims each run only on an instance that has its version, and every thread still ends once", async () => {
    const v1 = await world.start(1);
    const sql = world.sql();
    const cases = await pauseUnderV1(v1.server.url, sql, ["human_review", "confirm_email"], GOODWILL);
    const v2 = await world.start(2);
    const migrating = cases.filter((c) => c.kind === "human_review").map((c) => c.threadId);
    await until(
      "the migrations",
      () =>
        sql.count("threads", "id = ANY($1) AND agent_version = '2' AND status = 'interrupted'", [migrating]),
      (n) => n === migrating.length,
      60_000 + PER_KIND * 2_000,
    );

    // Answers go to either server, alternating: a v1 instance given a version 2 thread queues its run for v2.
    const refunds = cases.filter((c) => c.kind !== "goodwill");
    await inBatches(refunds, 8, (c, k) =>
      driveToEnd(sql, c, (i) => ((i + k) % 2 === 0 ? v1.server.url : v2.server.url)),
    );
    // Goodwill 1 threads are answered on v1, which still has that version.
    await inBatches(
      cases.filter((c) => c.kind === "goodwill"),
      8,
      (c) => driveToEnd(sql, c, () => v1.server.url),
    );
    expect(
      await sql.count("threads", "id = ANY($1) AND status = 'completed'", [cases.map((c) => c.threadId)]),
    ).toBe(cases.length);

    const runs = await sql.rows<{ agent_key: string; owner: string | null; kind: string }>(
      "SELECT agent_key, owner, kind FROM runs WHERE thread_id = ANY($1)",
      [cases.map((c) => c.threadId)],
    );
    const onlyV2 = runs.filter((r) => r.agent_key === "refund@2" || r.agent_key === "goodwill@2");
    const onlyV1 = runs.filter((r) => r.agent_key === "goodwill@1");
    expect(onlyV2.length).toBeGreaterThan(migrating.length); // the migrations and the resumes after them
    expect(onlyV2.filter((r) => r.owner !== v2.instance)).toEqual([]);
    expect(onlyV1.filter((r) => r.owner !== v1.instance)).toEqual([]);
    expect(runs.filter((r) => r.owner !== v1.instance && r.owner !== v2.instance)).toEqual([]);
    // Both instances did work on the shared version.
    const shared = runs.filter((r) => r.agent_key === "refund@1" && r.kind === "resume");
    expect(new Set(shared.map((r) => r.owner)).size).toBe(2);
    const counts = await expectEffectsOnce(world, refunds);
    console.log(
      `[upgrade:rolling] ${cases.length} threads completed on two instances; ${onlyV2.length} v2 runs all on v2, ` +
        `${onlyV1.length} goodwill 1 runs all on v1; ${counts.payments} payments, ${counts.emails} emails`,
    );
  }, 900_000);
});

describe("a team's own agents, added by the guide, arrive with the deploy", () => {
  const world = useWorld("guide");
  let base = "";

  it.each(Object.keys(GUIDE_FLOWS))(
    "%s: its own ticket filed in Chromium; shown and answered there, reloaded, forked from before its question and answered otherwise",
    async (agentId) => {
      base ||= (await world.start(2)).server.url;
      await runGuideIntake(base, agentId);
      await runGuideFlow(base, agentId);
    },
    120_000,
  );
});
