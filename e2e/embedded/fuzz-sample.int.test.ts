import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTicket, pausedTicket } from "../api/client";
import { describeRequest, send } from "../api/fuzz-send";
import { type FuzzContext, type HostileRequest, TARGETS } from "../api/fuzz-targets";
import { authedFetch, authHeaders, signIn, TEST_PASSWORD } from "../support/auth";
import { startEmbeddedServer } from "../support/embedded/server";
import type { TestServer } from "../support/server";

/*
 * The fuzz suite's hostile requests, on the embedded database: a sample of FUZZ_EMBEDDED_RUNS (default 25) requests
 * per route-method, seeded, against `next start` on PGlite, eight at a time. Two properties: no response is ≥ 500 and
 * none takes over 5 s — one connection serialises everything, so this is where a request waiting on another's
 * transaction would show. (The "refusals write nothing" property needs the database read directly, which only the
 * Postgres fuzz suite can do: the server is the embedded database's only client.) Afterwards the server is healthy.
 */

const SEED = Number(process.env.FUZZ_SEED ?? 20_260_901);
const RUNS = Number(process.env.FUZZ_EMBEDDED_RUNS ?? 25);
const BATCH = 8;

describe("hostile requests on the embedded database (a sample of every route)", () => {
  let server: TestServer | undefined;
  let stop: (() => Promise<void>) | undefined;
  let ctx: FuzzContext;
  let cookieName = "";
  let victimCookie = "";

  beforeAll(async () => {
    ({ server, stop } = await startEmbeddedServer({
      CLAIM_TTL_MS: "3600000",
      OPS_SAMPLE_INTERVAL_MS: "3600000",
    }));
    const base = server.url;
    const paused = [];
    for (const order of ["ORD-1002", "ORD-1004", "ORD-1008"]) paused.push(await pausedTicket(base, order));
    const idle = await createTicket(base, "Refund ORD-1010 please, the shoes fell apart.");
    const admin = (path: string, body: unknown) =>
      authedFetch(
        `${base}${path}`,
        { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) },
        "admin",
      );
    const victimUserIds: string[] = [];
    const victimKeyIds: string[] = [];
    for (let i = 0; i < 2; i++) {
      const user = await admin("/api/admin/users", {
        email: `fuzz-victim-${i}@test.local`,
        name: "Victim",
        password: TEST_PASSWORD,
        role: "viewer",
      });
      expect(user.status).toBe(201);
      victimUserIds.push(((await user.json()) as { id: string }).id);
      const key = await admin("/api/admin/keys", { name: `fuzz-victim-${i}` });
      expect(key.status).toBe(201);
      victimKeyIds.push(((await key.json()) as { apiKey: { id: string } }).apiKey.id);
    }
    victimCookie = await signIn(base, "fuzz-victim-0@test.local");
    cookieName = ((await authHeaders(base, "viewer")).cookie ?? "").split("=", 1)[0]!;
    const threadIds = [...paused.map((p) => p.threadId), idle];
    const checkpoints: [string, string][] = [];
    for (const threadId of threadIds) {
      const history = (await (
        await authedFetch(`${base}/api/threads/${threadId}/history?limit=20`)
      ).json()) as {
        checkpoints: { checkpointId: string }[];
      };
      for (const c of history.checkpoints) checkpoints.push([threadId, c.checkpointId]);
    }
    ctx = {
      origin: base,
      threadIds,
      checkpoints,
      interruptIds: paused.map((p) => p.interruptId),
      effectIds: [],
      victimUserIds,
      victimKeyIds,
      victimEmail: "fuzz-victim-1@test.local",
      inboxCursors: ["e30"],
      auditIds: [1, 2, 3],
    };
  }, 180_000);
  afterAll(async () => {
    await stop?.();
  });

  async function headersFor(request: HostileRequest): Promise<Record<string, string>> {
    const who = request.sender;
    const base: Record<string, string> =
      who === "anonymous" || who === "bad-bearer"
        ? {}
        : who === "bad-cookie"
          ? { cookie: `${cookieName}=garbage.sig` }
          : who === "victim"
            ? { cookie: victimCookie }
            : await authHeaders(server!.url, who);
    return { ...base, ...request.headers };
  }

  it("no route answers ≥ 500 or hangs, eight requests at a time on one connection", async () => {
    const failures: string[] = [];
    let total = 0;
    const t0 = performance.now();
    for (const [index, target] of TARGETS.entries()) {
      const requests = fc.sample(target.build(ctx), { seed: SEED + index, numRuns: RUNS });
      for (let i = 0; i < requests.length; i += BATCH) {
        await Promise.all(
          requests.slice(i, i + BATCH).map(async (request) => {
            const headers = await headersFor(request);
            const outcome = await send(server!.url, request, headers);
            total += 1;
            if (outcome.status >= 500 || outcome.hang) {
              failures.push(
                `${outcome.hang ? "hang" : outcome.status}: ${describeRequest(request, headers).slice(0, 300)} → ${outcome.text.slice(0, 300)}`,
              );
            }
          }),
        );
      }
    }
    console.log(
      `fuzz (embedded): ${total} requests (${RUNS} per route-method × ${TARGETS.length}, seed ${SEED}) in ${((performance.now() - t0) / 1000).toFixed(0)} s, ${failures.length} failures`,
    );
    expect(failures.slice(0, 8), `${failures.length} failures`).toEqual([]);
    const health = await fetch(`${server!.url}/api/health`);
    expect(health.status).toBe(200);
    for (const who of ["viewer", "operator", "supervisor", "admin"] as const) {
      expect((await authedFetch(`${server!.url}/api/threads?limit=1`, {}, who)).status).toBe(200);
    }
  }, 600_000);
});
