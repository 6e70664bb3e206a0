import { randomUUID } from "node:crypto";
import { openBackend } from "@/e2e/support/backends";
import { createTestDatabase } from "@/e2e/support/pg";
import { openRefundHarness, type RefundHarness } from "@/e2e/support/refund-harness";
import { refundGraphInput } from "@/lib/agents/refund";
import { AppError } from "@/lib/contract/errors";
import type { InboxDecisionItem, InboxPage, InboxThreadItem } from "@/lib/contract/inbox";
import { summarizePayload } from "@/lib/contract/questions";
import { migrateDatabase } from "../migrate";
import { type Database, openPostgres } from "../open";
import { recordPendingDecisions } from "./decisions";
import { encodeInboxCursor, listInbox, listPendingInbox, listThreadInbox, queueNeighbours } from "./inbox";
import { createThread, setThreadStatus } from "./threads";

/*
 * Fixture: 8 threads carrying 40 pending decisions plus 10 decided ones, and 20 threads without decisions. Ids are
 * zero-padded lowercase, so their order is the same under any collation. Decisions come in groups of three per
 * hour: two with the same created_at (the interrupt id breaks the tie) and one a single microsecond later (a key
 * rounded to milliseconds would repeat or skip rows). Ten decisions are minutes old, for `olderThan`.
 */
const ACTIONS = ["refund_approval", "select_option", "input_text", "confirm_email", "unknown"] as const;
const TEN_DAYS_US = 10 * 86_400 * 1e6;
const THREAD_STATUS = [
  "interrupted",
  "interrupted",
  "interrupted",
  "interrupted",
  "completed",
  "failed",
  "running",
];

interface FixtureDecision {
  id: string;
  thread: string;
  action: string;
  amount: number | null;
  offsetUs: number;
  status: string;
}

const pendingFixture: FixtureDecision[] = Array.from({ length: 40 }, (_, i) => ({
  id: `d${String(39 - i).padStart(3, "0")}x${i % 3}`, // ids run against time, so order-by-id would be wrong
  thread: `th${String(i % 8).padStart(3, "0")}`,
  action: ACTIONS[i % 5]!,
  amount: i % 5 === 0 ? (i + 1) * 1000 : i === 1 ? 15_000 : null,
  offsetUs:
    i < 30 ? Math.floor(i / 3) * 3600e6 + (i % 3 === 2 ? 1 : 0) : TEN_DAYS_US - (60 * (40 - i) + 30) * 1e6,
  status: "pending",
}));
const decidedFixture: FixtureDecision[] = Array.from({ length: 10 }, (_, i) => ({
  id: `a${String(i).padStart(3, "0")}`,
  thread: `th${String(i % 8).padStart(3, "0")}`,
  action: "refund_approval",
  amount: 99_000,
  offsetUs: -1e6 * (i + 1),
  status: i % 2 ? "resolved" : "superseded",
}));
/** Expected order: (created_at, interrupt_id). */
const expectedPending = [...pendingFixture]
  .sort((a, b) => a.offsetUs - b.offsetUs || (a.id < b.id ? -1 : 1))
  .map((d) => d.id);

async function insertFixture(database: Database) {
  const base = "date_trunc('second', now()) - interval '10 days' + interval '123457 microseconds'";
  // 28 threads; updated_at comes in pairs, so the id breaks ties in the threads listing too.
  await database.sql.query(
    `INSERT INTO threads (id, title, customer_message, order_ref, status, updated_at)
     SELECT 'th' || lpad(g::text, 3, '0'), 'Ticket ' || g, 'message ' || g, 'ORD-' || (1000 + g),
       ($1::text[])[1 + g % 8], ${base} + (g / 2) * interval '1 minute'
     FROM generate_series(0, 27) AS g`,
    [[...THREAD_STATUS, "idle"]],
  );
  const all = [...pendingFixture, ...decidedFixture];
  await database.sql.query(
    `INSERT INTO decisions (interrupt_id, thread_id, run_id, checkpoint_id, action, payload, title, order_id,
       customer_name, amount_cents, currency, status, created_at)
     SELECT x.id, x.thread, 'run-1', 'cp-1', x.action, '{}'::jsonb, 'Decision ' || x.id, 'ORD-' || x.id,
       'Customer ' || x.id, x.amount, CASE WHEN x.amount IS NULL THEN NULL ELSE 'EUR' END, x.status,
       ${base} + x.offset_us * interval '1 microsecond'
     FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::bigint[], $6::text[])
       AS x(id, thread, action, amount, offset_us, status)`,
    [
      all.map((d) => d.id),
      all.map((d) => d.thread),
      all.map((d) => d.action),
      all.map((d) => d.amount),
      all.map((d) => d.offsetUs),
      all.map((d) => d.status),
    ],
  );
}

/** Every page of a listing, following nextCursor. */
async function walk<T>(fetchPage: (cursor: string | null) => Promise<InboxPage<T>>): Promise<T[][]> {
  const pages: T[][] = [];
  let cursor: string | null = null;
  do {
    const page: InboxPage<T> = await fetchPage(cursor);
    pages.push(page.items);
    cursor = page.nextCursor;
  } while (cursor && pages.length < 100);
  return pages;
}

const ids = (items: InboxDecisionItem[]) => items.map((i) => i.decision.interruptId);

describe("inbox queries on postgres", () => {
  let backend: Awaited<ReturnType<typeof openBackend>>;
  let database: Database;

  beforeAll(async () => {
    backend = await openBackend("postgres");
    database = backend.database;
    await insertFixture(database);
  });
  afterAll(async () => {
    await backend?.close();
  });

  it("lists pending decisions oldest first with their thread, never decided ones", async () => {
    const page = await listPendingInbox({ db: database.db });
    expect(ids(page.items)).toEqual(expectedPending);
    expect(page.nextCursor).toBeNull();
    // Two decisions share the oldest created_at: the smaller interrupt id comes first.
    const first = page.items[0]!;
    expect(first).toMatchObject({
      kind: "decision",
      decision: { interruptId: "d038x1", action: "select_option", amountCents: 15_000, currency: "EUR" },
      thread: { threadId: "th001", title: "Ticket 1", orderRef: "ORD-1001", status: "interrupted" },
    });
    expect(page.items[1]!.decision.interruptId).toBe("d039x0");
    expect(first.decision.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.123457Z$/);
    expect(first.decision.ageSeconds).toBeGreaterThanOrEqual(10 * 86_400 - 2);
  });

  it("pages without overlap or gaps, through equal timestamps and 1 µs apart", async () => {
    for (const limit of [1, 2, 3, 7, 39, 40]) {
      const pages = await walk((cursor) => listPendingInbox({ db: database.db, cursor, limit }));
      expect(pages.flatMap(ids)).toEqual(expectedPending);
      expect(pages.slice(0, -1).every((p) => p.length === limit)).toBe(true);
    }
  });

  it("filters by action, amount range and minimum age, and pages through the filtered list", async () => {
    const expectIds = (pred: (d: FixtureDecision) => boolean) =>
      expectedPending.filter((id) => pred(pendingFixture.find((d) => d.id === id)!));
    const filtered = async (filter: Parameters<typeof listPendingInbox>[0]["filter"], limit = 4) =>
      (await walk((cursor) => listPendingInbox({ db: database.db, filter, cursor, limit }))).flatMap(ids);

    expect(await filtered({ action: "input_text" })).toEqual(expectIds((d) => d.action === "input_text"));
    expect(await filtered({ action: "unknown" })).toEqual(expectIds((d) => d.action === "unknown"));
    expect(await filtered({ minAmountCents: 15_000 })).toEqual(expectIds((d) => (d.amount ?? -1) >= 15_000));
    expect(await filtered({ maxAmountCents: 11_000 })).toEqual(
      expectIds((d) => d.amount !== null && d.amount <= 11_000),
    );
    expect(
      await filtered({ action: "refund_approval", minAmountCents: 10_000, maxAmountCents: 30_000 }),
    ).toEqual(expectIds((d) => d.action === "refund_approval" && d.amount! >= 10_000 && d.amount! <= 30_000));
    // Ten decisions are 90 s to 630 s old; the other thirty are days old.
    const fiveMinutes = await filtered({ olderThanSeconds: 300 }, 9);
    expect(fiveMinutes).toEqual(expectIds((d) => d.offsetUs < TEN_DAYS_US - 300e6));
    expect(fiveMinutes).toHaveLength(36);
    expect(await filtered({ olderThanSeconds: 86_400 })).toHaveLength(30);
    expect(await filtered({ olderThanSeconds: 30 * 86_400 })).toEqual([]);
  });

  it("next / previous walk the inbox's own list, in any view: the whole queue or a filtered one", async () => {
    const views: NonNullable<Parameters<typeof listPendingInbox>[0]["filter"]>[] = [
      {},
      { action: "input_text" },
      { minAmountCents: 15_000 },
      { action: "refund_approval", minAmountCents: 10_000, maxAmountCents: 30_000 },
      { olderThanSeconds: 300 },
      { action: "confirm_email", maxAmountCents: 1 },
      { claimedBy: null },
    ];
    const everyThread = Array.from({ length: 28 }, (_, g) => `th${String(g).padStart(3, "0")}`);
    for (const filter of views) {
      // The oracle is the inbox listing itself: a thread's place is its first (soonest) row in the view.
      const listed = (await walk((cursor) => listPendingInbox({ db: database.db, filter, cursor, limit: 7 })))
        .flat()
        .map((i) => i.thread.threadId);
      for (const threadId of everyThread) {
        const at = listed.indexOf(threadId);
        const want =
          at === -1
            ? { previous: null, next: listed[0] ?? null }
            : {
                previous: listed[at - 1] ?? null,
                next: listed.slice(at + 1).find((t) => t !== threadId) ?? null,
              };
        const got = await queueNeighbours({ db: database.db, threadId, filter });
        expect(
          { previous: got.previous?.threadId ?? null, next: got.next?.threadId ?? null },
          `${threadId} in ${JSON.stringify(filter)}`,
        ).toEqual(want);
      }
    }
  });

  it("lists threads by status newest-updated first, each with its pending decisions", async () => {
    const page = await listThreadInbox({ db: database.db, status: "interrupted" });
    const interrupted = Array.from({ length: 28 }, (_, g) => g)
      .filter((g) => g % 8 < 4)
      .sort((a, b) => Math.floor(b / 2) - Math.floor(a / 2) || b - a)
      .map((g) => `th${String(g).padStart(3, "0")}`);
    expect(page.items.map((i) => i.thread.threadId)).toEqual(interrupted);
    for (const item of page.items) {
      const own = expectedPending.filter(
        (id) => pendingFixture.find((d) => d.id === id)!.thread === item.thread.threadId,
      );
      expect(item.pendingDecisions.map((d) => d.interruptId)).toEqual(own);
    }
    expect(page.items.find((i) => i.thread.threadId === "th000")?.pendingDecisions).toHaveLength(5);
    expect(page.items.find((i) => i.thread.threadId === "th008")?.pendingDecisions).toEqual([]);

    const running = await listThreadInbox({ db: database.db, status: "running" });
    expect(running.items.map((i) => [i.thread.threadId, i.thread.status])).toEqual([
      ["th022", "running"],
      ["th014", "running"],
      ["th006", "running"],
    ]);
  });

  it("pages every thread (status=all) without overlap or gaps through equal updated_at", async () => {
    const everyThread = Array.from({ length: 28 }, (_, g) => g)
      .sort((a, b) => Math.floor(b / 2) - Math.floor(a / 2) || b - a)
      .map((g) => `th${String(g).padStart(3, "0")}`);
    for (const limit of [1, 3, 5, 28]) {
      const pages = await walk((cursor) =>
        listThreadInbox({ db: database.db, status: "all", cursor, limit }),
      );
      expect(pages.flat().map((i: InboxThreadItem) => i.thread.threadId)).toEqual(everyThread);
    }
  });

  it("refuses foreign or damaged cursors and decision filters outside status=pending", async () => {
    const threadCursor = (await listThreadInbox({ db: database.db, status: "all", limit: 2 })).nextCursor!;
    const refusal = (promise: Promise<unknown>) =>
      promise.then(
        () => {
          throw new Error("expected a refusal");
        },
        (error: unknown) => {
          expect(error).toBeInstanceOf(AppError);
          expect((error as AppError).code).toBe("bad_request:inbox");
          expect((error as AppError).status).toBe(400);
          return (error as AppError).message;
        },
      );
    expect(await refusal(listPendingInbox({ db: database.db, cursor: threadCursor }))).toMatch(
      /status=all listing/,
    );
    expect(await refusal(listPendingInbox({ db: database.db, cursor: "not-a-cursor" }))).toMatch(
      /cursor is not valid/,
    );
    const forged = encodeInboxCursor({ m: "pending", t: "2024-01-01 00:00", i: "x" });
    expect(await refusal(listPendingInbox({ db: database.db, cursor: forged }))).toMatch(
      /cursor is not valid/,
    );
    expect(
      await refusal(
        listInbox({ db: database.db, status: "completed", filter: { action: "refund_approval" } }),
      ),
    ).toMatch(/status=pending/);
  });
});

describe("GET /api/threads on postgres", () => {
  let created: Awaited<ReturnType<typeof createTestDatabase>>;
  let GET: (request: Request) => Promise<Response>;
  let closeServerDb: () => Promise<void> = async () => {};
  let cookie = "";

  beforeAll(async () => {
    created = await createTestDatabase("inbox");
    const database = openPostgres(created.url, { max: 2 });
    try {
      await migrateDatabase(database);
      await insertFixture(database);
    } finally {
      await database.close();
    }
    // The route opens the process database from the environment: point it at this one, with fresh modules (the env
    // module reads process.env once).
    process.env.DATABASE_URL = created.url;
    process.env.MIGRATE_ON_START = "false";
    vi.resetModules();
    ({ GET } = await import("@/app/api/threads/route"));
    const { getDatabase } = await import("@/lib/db/client");
    closeServerDb = async () => (await getDatabase()).close();
    // The route needs a signed-in user: a viewer, signed in through better-auth in this process.
    const { createUser } = await import("@/lib/auth/users");
    const { getAuth } = await import("@/lib/auth/auth");
    const credentials = { email: "viewer@inbox.test", password: "inbox-viewer-password" };
    await createUser({
      db: (await getDatabase()).db,
      ...credentials,
      name: "Inbox viewer",
      role: "viewer",
      by: { kind: "system", id: "system:test", label: "test", role: "admin" },
    });
    const signedIn = await (await getAuth()).api.signInEmail({ body: credentials, asResponse: true });
    cookie = signedIn.headers
      .getSetCookie()
      .map((c) => c.split(";", 1)[0])
      .join("; ");
  });
  afterAll(async () => {
    await closeServerDb();
    await created?.drop();
  });

  const get = (query: string) =>
    GET(new Request(`http://localhost/api/threads${query}`, { headers: { cookie } }));

  it("answers 401 without a session", async () => {
    const res = await GET(new Request("http://localhost/api/threads"));
    expect(res.status).toBe(401);
    expect((await res.json()).code).toBe("unauthorized:session");
  });

  it("answers the default inbox and follows nextCursor", async () => {
    const first = await get("?limit=25");
    expect(first.status).toBe(200);
    const body = (await first.json()) as InboxPage<InboxDecisionItem>;
    expect(body.items).toHaveLength(25);
    const rest = (await (
      await get(`?limit=25&cursor=${body.nextCursor}`)
    ).json()) as InboxPage<InboxDecisionItem>;
    expect([...ids(body.items), ...ids(rest.items)]).toEqual(expectedPending);
    expect(rest.nextCursor).toBeNull();
    const filtered = await get("?action=refund_approval&minAmount=20000&olderThan=3d");
    expect(ids(((await filtered.json()) as InboxPage<InboxDecisionItem>).items)).toEqual([
      "d019x2",
      "d014x1",
    ]);
    const threads = (await (await get("?status=failed")).json()) as InboxPage<InboxThreadItem>;
    expect(threads.items.map((i) => i.thread.threadId)).toEqual(["th021", "th013", "th005"]);
  });

  it.each([
    ["?status=archived", /status: Invalid option/],
    ["?action=approve", /action: Invalid option/],
    ["?minAmount=-5", /minAmount: must be a whole number of cents/],
    ["?maxAmount=12.50", /maxAmount: must be a whole number of cents/],
    ["?minAmount=500&maxAmount=100", /minAmount must not exceed maxAmount/],
    ["?olderThan=2weeks", /olderThan: must be a duration/],
    ["?limit=0", /limit: must be at least 1/],
    ["?limit=201", /limit: must be at most 200/],
    ["?cursor=%25%25%25", /cursor is not valid/],
    ["?status=completed&minAmount=100", /use them with status=pending/],
    ["?min_amount=100", /min_amount: is not a parameter/],
  ])("refuses %s with 400 bad_request:inbox", async (query, message) => {
    const response = await get(query);
    expect(response.status).toBe(400);
    const body = (await response.json()) as { code: string; message: string };
    expect(body.code).toBe("bad_request:inbox");
    expect(body.message).toMatch(message);
  });
});

describe("inbox with threads run by the refund graph", () => {
  let h: RefundHarness;

  beforeAll(async () => {
    h = await openRefundHarness("postgres");
  });
  afterAll(async () => {
    await h?.close();
  });

  /** Create the thread row, run the graph to its first pause, and record the ledger as the runtime does. */
  async function runTicket(message: string): Promise<string> {
    const { db } = h.database;
    const thread = await createThread({
      db,
      title: message.slice(0, 40),
      customerMessage: message,
      orderRef: null,
    });
    const config = { configurable: { thread_id: thread.id } };
    await h.graph.invoke(refundGraphInput({ messageId: randomUUID(), customerMessage: message }), config);
    const state = await h.graph.getState(config);
    const interrupts = state.tasks.flatMap((t) => t.interrupts);
    await recordPendingDecisions({
      db,
      rows: interrupts.map((i) => ({
        interruptId: i.id!,
        threadId: thread.id,
        runId: randomUUID(),
        checkpointId: state.config.configurable?.checkpoint_id as string,
        action: (i.value as { action: string }).action,
        payload: i.value as object,
        ...summarizePayload(i.value),
      })),
    });
    await setThreadStatus({
      db,
      threadId: thread.id,
      status: interrupts.length ? "interrupted" : "completed",
    });
    return thread.id;
  }

  it("shows a pending refund approval with its amount, customer and order", async () => {
    const approval = await runTicket("My headphones (ORD-1002) stopped working. I want a refund.");
    const email = await runTicket("Hi, the mug from ORD-1001 arrived damaged. Please refund €12.49.");

    const page = (await listInbox({ db: h.database.db })) as InboxPage<InboxDecisionItem>;
    expect(page.items.map((i) => [i.thread.threadId, i.decision.action])).toEqual([
      [approval, "refund_approval"],
      [email, "confirm_email"],
    ]);
    expect(page.items[0]).toMatchObject({
      decision: { orderId: "ORD-1002", customerName: "Lars Jensen", amountCents: 24_900, currency: "EUR" },
      thread: { threadId: approval, status: "interrupted" },
    });
    expect(page.items[0]!.decision.title).toBeTruthy();
    expect(page.items[1]!.decision).toMatchObject({ amountCents: null, customerName: null });

    const big = (await listInbox({
      db: h.database.db,
      filter: { action: "refund_approval", minAmountCents: 20_000 },
    })) as InboxPage<InboxDecisionItem>;
    expect(big.items.map((i) => i.thread.threadId)).toEqual([approval]);
    const interrupted = (await listInbox({
      db: h.database.db,
      status: "interrupted",
    })) as InboxPage<InboxThreadItem>;
    expect(interrupted.items.map((i) => [i.thread.threadId, i.pendingDecisions.length])).toEqual([
      [email, 1],
      [approval, 1],
    ]);
  });
});
