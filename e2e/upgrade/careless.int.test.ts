import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openThreadJson } from "@/lib/db/vault";
import { agentFor, createTicket, pausedAtApproval, runOnce } from "../api/client";
import { cleanUp, prepareDatabase, startTestServer } from "../api/setup";
import { authedFetch } from "../support/auth";
import { type FakePaymentProvider, startFakePaymentProvider } from "../support/fake-payment";
import type { TestServer } from "../support/server";
import { buildCarelessTree } from "./tree";

/*
 * A careless deploy onto paused threads: the next build renames the state field the refund approval reads
 * (`requested` → `requestedAmount`) and adds a node to the goodwill agent, and bumps nothing — same versions, same
 * declared structure hashes (tree.ts). Before, it resumed the paused threads: the operator approved "Refund of €120.00"
 * and the graph paid the order's €500. Now:
 * - the server hashes the graph at start, sees it is not what version 1 declares, and refuses the version: in
 *   production it does not start while threads wait on it (the rollout stops); told to start anyway, it resumes no
 *   thread under it, health says degraded and names it (readiness 503), and every page and read of those threads
 *   answers and says why — never a 500;
 * - with that check switched off (a test-only switch), a resume finds the question asked again is not the one the
 *   ledger recorded and stops the run as needs_attention before anything after it runs.
 * Payments are counted where they would arrive: at the payment provider.
 */

const THREADS = 3;
const order = (n: number) => `ORD-5${String(n).padStart(3, "0")}`;

describe("a careless deploy (a renamed state field, an added node, no version bump) pays nothing", () => {
  let prepared: Awaited<ReturnType<typeof prepareDatabase>>;
  let provider: FakePaymentProvider;
  let tree: ReturnType<typeof buildCarelessTree> | undefined;
  const servers: TestServer[] = [];
  /** Threads paused at a €120.00 approval of a €500.00 order, under the current build. */
  const refused: string[] = [];
  const resumed: string[] = [];
  /** Goodwill threads paused at their voucher question, under the current build (the careless add-node). */
  const goodwill: string[] = [];

  beforeAll(async () => {
    tree = buildCarelessTree();
    prepared = await prepareDatabase("careless", { prefix: "ORD-5", count: THREADS * 3 });
    provider = await startFakePaymentProvider();
    const v1 = await startTestServer({ databaseUrl: prepared.url, env: { PAYMENT_URL: provider.url } });
    servers.push(v1);
    for (let i = 0; i < THREADS * 2; i++) {
      const threadId = await pausedAtApproval(
        v1.url,
        order(i),
        "intake",
        `Please refund €120 of ${order(i)}.`,
      );
      (i < THREADS ? refused : resumed).push(threadId);
    }
    for (let i = THREADS * 2; i < THREADS * 3; i++) {
      const message = `The delivery of ${order(i)} was two weeks late.`;
      const threadId = await createTicket(v1.url, message, order(i), "goodwill");
      const run = await runOnce(agentFor(v1.url, threadId), { message, as: "intake" });
      expect(run.interrupts[0]?.reason).toBe("goodwill_voucher");
      goodwill.push(threadId);
    }
    await v1.stop();
  }, 900_000);
  afterAll(async () => {
    await cleanUp(servers, prepared);
    await provider?.close();
    if (!process.env.UPGRADE_CARELESS_DIR) tree?.remove();
  });

  const approvalOf = async (base: string, threadId: string) => {
    const state = await (await authedFetch(`${base}/api/threads/${threadId}`)).json();
    return state as {
      status: string;
      pendingInterrupts: { interruptId: string; action: string; payload: { title: string } }[];
    };
  };
  const approve = (base: string, threadId: string, interruptId: string) =>
    authedFetch(`${base}/api/threads/${threadId}/decisions/${interruptId}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ answer: { decision: "approve" } }),
    });

  it("the recorded question asked for €120.00", async () => {
    const stored = await prepared.sql.rows<{ thread_id: string; payload: unknown }>(
      "SELECT thread_id, payload FROM decisions WHERE thread_id = ANY($1) AND action = 'refund_approval'",
      [[...refused, ...resumed]],
    );
    expect(stored).toHaveLength(THREADS * 2);
    // Each question is sealed under its thread's key: opened as the server opens it.
    for (const row of stored) {
      const payload = (await openThreadJson(prepared.sql, row.thread_id, row.payload)) as { title: string };
      expect(payload.title).toContain("€120.00");
    }
  });

  it("the server refuses the mismatching version at start: health names it, no thread resumes under it", async () => {
    // In production the careless build does not start while threads wait on the version it refuses: the rollout
    // stops at the first instance.
    const stopped = await startTestServer({
      databaseUrl: prepared.url,
      cwd: tree!.dir,
      env: { PAYMENT_URL: provider.url, NEXT_DIST_DIR: "" },
    }).then(
      (server) => {
        servers.push(server);
        return "started";
      },
      (error: Error) => error.message,
    );
    expect(stopped).toMatch(/exited early \(78\)/);
    expect(stopped).toMatch(/refund@1, goodwill@1 refused .* 9 thread\(s\) wait on it/);
    // Told to start anyway, it serves those threads read-only.
    const careless = await startTestServer({
      databaseUrl: prepared.url,
      cwd: tree!.dir,
      env: { PAYMENT_URL: provider.url, NEXT_DIST_DIR: "", START_WITH_REFUSED_VERSIONS: "1" },
    });
    servers.push(careless);
    const healthRes = await fetch(`${careless.url}/api/health`);
    // Serving (every thread still reads), but degraded: the refused version is named, with what to do.
    expect(healthRes.status).toBe(200);
    const health = await healthRes.json();
    expect(health).toMatchObject({ status: "degraded", code: "degraded:refused_versions" });
    expect(health.refusedVersions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          agent: "refund",
          version: "1",
          declared: expect.stringMatching(/^sha256:/),
        }),
        expect.objectContaining({
          agent: "goodwill",
          version: "1",
          declared: expect.stringMatching(/^sha256:/),
        }),
      ]),
    );
    expect(health.refusedVersions).toHaveLength(2);
    for (const r of health.refusedVersions) expect(r.actual).not.toBe(r.declared);
    // Readiness stops a rollout: 503 while a refused version has threads waiting on it.
    const ready = await fetch(`${careless.url}/api/health?probe=ready`);
    expect(ready.status).toBe(503);
    expect((await ready.json()).code).toBe("degraded:refused_versions");
    expect(careless.log()).toMatch(/refund@1 refused/);
    // Every page and read of the refused version's threads answers, and says why in words: never a 500.
    const served: string[] = [];
    for (const threadId of [...refused, ...goodwill]) {
      const view = await authedFetch(`${careless.url}/api/threads/${threadId}`, {}, "viewer");
      expect(view.status, `view of ${threadId}`).toBe(200);
      const body = (await view.json()) as {
        attention: { reason: string } | null;
        pendingInterrupts: { interruptId: string; action: string }[];
        decisions: { checkpointId: string }[];
      };
      expect(body.attention?.reason).toMatch(
        goodwill.includes(threadId) ? /goodwill version 1/ : /refund version 1/,
      );
      expect(body.attention?.reason).toMatch(/close the thread/);
      expect(body.pendingInterrupts).toHaveLength(1);
      const checkpointId = body.decisions[0]?.checkpointId;
      for (const path of [
        `/threads/${threadId}`,
        `/threads/${threadId}/history`,
        `/api/threads/${threadId}/history`,
        `/api/threads/${threadId}/effects`,
        `/api/threads/${threadId}/checkpoints/${checkpointId}`,
        `/api/threads/${threadId}/checkpoints/${checkpointId}/side-effects`,
        `/api/threads/${threadId}/events?after=0`,
        "/",
        "/api/threads?status=pending",
        "/search?q=ORD-5",
      ]) {
        const res = await authedFetch(
          `${careless.url}${path}`,
          { signal: AbortSignal.timeout(5_000) },
          "supervisor",
        )
          .then(async (r) => {
            // A stream (the events) is read as far as its first bytes.
            await r.body?.getReader().read();
            return r.status;
          })
          .catch((e: unknown) => `${(e as Error).name}`);
        served.push(`${res} ${path}`);
      }
    }
    expect(served.filter((line) => !/^(200|409) /.test(line))).toEqual([]);
    const interruptIds = await prepared.sql.rows<{ thread_id: string; interrupt_id: string; action: string }>(
      "SELECT thread_id, interrupt_id, action FROM decisions WHERE thread_id = ANY($1) AND status = 'pending'",
      [[...refused, ...goodwill]],
    );
    expect(interruptIds).toHaveLength(refused.length + goodwill.length);
    for (const { thread_id, interrupt_id, action } of interruptIds) {
      const res = await authedFetch(`${careless.url}/api/threads/${thread_id}/decisions/${interrupt_id}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          answer: action === "goodwill_voucher" ? { decision: "grant" } : { decision: "approve" },
        }),
      });
      expect(res.status).toBe(409);
      expect((await res.json()).code).toBe("conflict:graph_version");
    }
    expect(
      await prepared.sql.count("runs", "thread_id = ANY($1) AND kind <> 'input'", [
        [...refused, ...goodwill],
      ]),
    ).toBe(0);
    expect(await prepared.sql.count("vouchers")).toBe(0);
    // What the page offers is possible: a supervisor closes a thread of each refused version, saying why.
    for (const threadId of [refused[0]!, goodwill[0]!]) {
      const res = await authedFetch(
        `${careless.url}/api/threads/${threadId}/close`,
        {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            note: "The deploy changed this agent without a new version; closed by hand.",
          }),
        },
        "supervisor",
      );
      expect(res.status, await res.clone().text()).toBe(200);
      expect((await approvalOf(careless.url, threadId)).status).toBe("closed");
    }
    expect(await prepared.sql.count("refunds", "order_id LIKE 'ORD-5%'")).toBe(0);
    await careless.stop();
  });

  it("with the start check off, the resume check stops every affected thread as needs_attention, paying nothing", async () => {
    const careless = await startTestServer({
      databaseUrl: prepared.url,
      cwd: tree!.dir,
      env: { PAYMENT_URL: provider.url, NEXT_DIST_DIR: "", UNSAFE_SKIP_STRUCTURE_CHECK: "1" },
    });
    servers.push(careless);
    for (const threadId of resumed) {
      const view = await approvalOf(careless.url, threadId);
      const pending = view.pendingInterrupts.find((p) => p.action === "refund_approval");
      expect(pending).toBeDefined();
      const res = await approve(careless.url, threadId, pending!.interruptId);
      expect([200, 202]).toContain(res.status);
    }
    const deadline = Date.now() + 30_000;
    let statuses: string[] = [];
    while (Date.now() < deadline) {
      statuses = await Promise.all(resumed.map(async (t) => (await approvalOf(careless.url, t)).status));
      if (statuses.every((s) => s === "needs_attention")) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(statuses).toEqual(resumed.map(() => "needs_attention"));
    const errors = await prepared.sql.rows<{ error_code: string | null }>(
      "SELECT error_code FROM runs WHERE thread_id = ANY($1) AND kind = 'resume'",
      [resumed],
    );
    expect(errors.map((r) => r.error_code)).toEqual(resumed.map(() => "conflict:interrupt_changed"));
    // Nothing after the question ran: no refund recorded, none arrived at the provider.
    expect(await prepared.sql.count("refunds", "order_id LIKE 'ORD-5%'")).toBe(0);
    // The added node sits before the goodwill question, so the question is asked as recorded: that thread continues.
    const [open] = await prepared.sql.rows<{ interrupt_id: string }>(
      "SELECT interrupt_id FROM decisions WHERE thread_id = $1 AND status = 'pending'",
      [goodwill[1]],
    );
    const granted = await authedFetch(
      `${careless.url}/api/threads/${goodwill[1]}/decisions/${open!.interrupt_id}`,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ answer: { decision: "grant" } }),
      },
    );
    expect([200, 202]).toContain(granted.status);
    let continued = "";
    for (
      const until = Date.now() + 30_000;
      Date.now() < until;
      await new Promise((r) => setTimeout(r, 250))
    ) {
      continued = (await approvalOf(careless.url, goodwill[1]!)).status;
      if (continued === "completed") break;
    }
    expect(continued).toBe("completed");
    expect(await prepared.sql.count("vouchers", "thread_id = $1", [goodwill[1]])).toBe(1);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(provider.created).toHaveLength(0);
  });
});
