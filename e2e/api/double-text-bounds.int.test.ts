import fc from "fast-check";
import { authedFetch, authHeaders, type Who } from "../support/auth";
import { createTicket, runBody } from "./client";
import { type Backend, type Sql, serverOn, until } from "./setup";
import { readSseBody } from "./sse";

/*
 * Double texting has bounds (issue 50): a thread holds at most QUEUED_INPUTS_MAX waiting messages, and a principal
 * queues at most QUEUED_INPUTS_PER_MINUTE messages a minute, whichever threads they go to. Past either, 429 with its
 * own code, and nothing is written: no queued input, no audit entry, for the refused ones. Messages are generated (any
 * text, sent at once). Both databases: the embedded one through the API only.
 */

const LIMIT = 3;
const RATE = 5;
const ENV = {
  // The offline model takes its time, so a first run is still working when the messages arrive — on a loaded machine
  // too (at 150 ms a token, a first run sometimes ended before the fifth message of the rate test was sent).
  OFFLINE_TOKEN_DELAY_MS: "400",
  QUEUED_INPUTS_MAX: String(LIMIT),
  QUEUED_INPUTS_PER_MINUTE: String(RATE),
};

/** Messages anyone might type: any text, with something in it. */
const messages = (n: number, seed: number) =>
  fc.sample(
    fc.string({ unit: "grapheme", minLength: 1, maxLength: 300 }).filter((t) => t.trim().length > 0),
    { seed, numRuns: n },
  );

interface Answer {
  runId: string;
  status: number;
  code?: string;
  position?: number;
  retryAfter?: string | null;
}

/** POST a message as `who`; a stream (a run started at once) is read to its end in the background. */
async function send(base: string, threadId: string, text: string, who: Who): Promise<Answer> {
  const body = runBody(threadId, undefined, text);
  const url = `${base}/api/threads/${threadId}/runs`;
  const res = await authedFetch(
    url,
    {
      method: "POST",
      headers: {
        ...(await authHeaders(url, who)),
        "content-type": "application/json",
        accept: "text/event-stream",
      },
      body: JSON.stringify(body),
    },
    who,
  );
  if (res.headers.get("content-type")?.includes("text/event-stream")) {
    if (res.body) void readSseBody(res.body, () => {}).catch(() => {});
    return { runId: body.runId, status: res.status };
  }
  const json = (await res.json()) as { code?: string; position?: number };
  return {
    runId: body.runId,
    status: res.status,
    code: json.code,
    position: json.position,
    retryAfter: res.headers.get("retry-after"),
  };
}

describe.each<Backend>(["postgres", "pglite"])("bounded double texting on %s", (backend) => {
  let base = "";
  let sql: Sql | null = null;
  let stop: () => Promise<void> = async () => {};
  beforeAll(async () => {
    ({ base, sql, stop } = await serverOn(backend, "dtextbound", ENV));
  });
  afterAll(() => stop());

  /** A refund ticket whose first run is working (a message now is queued behind it). */
  async function busyThread(): Promise<string> {
    const first = "Refund ORD-1002 please, it arrived broken.";
    const threadId = await createTicket(base, first);
    expect((await send(base, threadId, first, "intake")).status).toBe(200);
    await until("the first run to be active", async () => {
      const res = await authedFetch(`${base}/api/threads/${threadId}`, {}, "supervisor");
      return ((await res.json()) as { activeRunId: string | null }).activeRunId !== null;
    });
    return threadId;
  }

  /** What was written for the thread: waiting inputs (the page's list), `input_queued` audit entries, raw rows. */
  async function written(threadId: string) {
    const view = (await (await authedFetch(`${base}/api/threads/${threadId}`, {}, "supervisor")).json()) as {
      queuedInputs: { runId: string }[];
    };
    const audit = (await (
      await authedFetch(`${base}/api/audit?action=input_queued&threadId=${threadId}&limit=200`, {}, "viewer")
    ).json()) as { items: { detail?: { runId?: string } }[] };
    return {
      waiting: view.queuedInputs.map((q) => q.runId).sort(),
      audited: audit.items.map((e) => e.detail?.runId ?? "").sort(),
      rows: sql ? await sql.count("queued_inputs", "thread_id = $1", [threadId]) : null,
      auditRows: sql
        ? await sql.count("audit_log", "thread_id = $1 AND action = 'input_queued'", [threadId])
        : null,
    };
  }

  test("a thread holds QUEUED_INPUTS_MAX waiting messages; the rest get 429 rate_limited:queue_full and write nothing", async () => {
    const threadId = await busyThread();
    const [one = "x", ...rest] = messages(LIMIT + 4, 50);
    // The first while the run works; the others at once (the queue now waits, whether or not the run still works).
    const first = await send(base, threadId, one, "supervisor");
    expect(first).toMatchObject({ status: 202, position: 1 });
    const answers = await Promise.all(rest.map((text) => send(base, threadId, text, "supervisor")));
    const queued = [first, ...answers.filter((a) => a.status === 202)];
    const refused = answers.filter((a) => a.status !== 202);
    expect(queued.map((a) => a.position).sort((x = 0, y = 0) => x - y)).toEqual([1, 2, 3]);
    expect(refused.map((a) => `${a.status} ${a.code}`)).toEqual(Array(4).fill("429 rate_limited:queue_full"));
    const ids = queued.map((a) => a.runId).sort();
    expect(await written(threadId)).toEqual({
      waiting: ids,
      audited: ids,
      rows: sql ? LIMIT : null,
      auditRows: sql ? LIMIT : null,
    });
  });

  test("a principal queues QUEUED_INPUTS_PER_MINUTE messages a minute across threads; then 429 rate_limited:queue_rate", async () => {
    const [a, b] = [await busyThread(), await busyThread()];
    const texts = messages(RATE + 2, 51);
    const answers: Answer[] = [];
    // Three on one thread (its queue is full then), two on the other: five a minute, all queued.
    for (const [i, text] of texts.slice(0, RATE).entries()) {
      answers.push(await send(base, i < LIMIT ? a : b, text, "operator"));
    }
    expect(answers.map((x) => x.status)).toEqual(Array(RATE).fill(202));
    // The sixth, to the thread with room: refused for the rate, not the queue.
    const sixth = await send(base, b, texts[RATE] ?? "x", "operator");
    expect(`${sixth.status} ${sixth.code}`).toBe("429 rate_limited:queue_rate");
    expect(Number(sixth.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(sixth.retryAfter)).toBeLessThanOrEqual(60);
    // Someone else may still queue there: the rate is the principal's.
    const other = await send(base, b, texts[RATE + 1] ?? "y", "supervisor");
    expect(other).toMatchObject({ status: 202, position: 3 });
    const ids = [...answers.slice(LIMIT).map((x) => x.runId), other.runId].sort();
    expect(await written(b)).toEqual({
      waiting: ids,
      audited: ids,
      rows: sql ? 3 : null,
      auditRows: sql ? 3 : null,
    });
  });
});
