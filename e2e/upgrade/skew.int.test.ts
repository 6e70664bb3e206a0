import { afterAll, beforeAll, describe, expect, it, onTestFailed } from "vitest";
import { pausedAtApproval } from "../api/client";
import { orderCustomer } from "../api/sealed";
import { cleanUp, prepareDatabase, startTestServer } from "../api/setup";
import { waitForEffectsToSettle } from "../chaos/effects";
import { authedFetch, type Who } from "../support/auth";
import { tablesHolding } from "../support/db-print";
import { type FakePaymentProvider, startFakePaymentProvider } from "../support/fake-payment";
import type { TestServer } from "../support/server";
import { runTsx } from "../support/spawn";
import { buildPreviousRelease, migrationTags, type PreviousRelease } from "./previous-release";

/*
 * Rolling deploys with schema skew (the README's "expand, then contract" rule). Mid-rollout the release before this
 * one (the commit pinned in previous-release.json, built from git) serves beside this checkout's build, on one
 * database this checkout's migrations brought to its schema. Proves: the previous release starts on a schema newer
 * than it knows and is healthy and ready; both serve at once; a ticket filed on one is approved on the other and its
 * reply confirmed back on the first, so each release resumes threads the other paused; every thread completes, every
 * refund reaches the payment provider exactly once, and neither server answers a 5xx to anything over the flows (the
 * thread view and history of every thread read on both).
 */

const PER_SIDE = 2;
const order = (n: number) => `ORD-3${String(n).padStart(3, "0")}`;

/** `work`, or a failure naming `what` after `ms`: a stream that never ends fails the test with its reason, early. */
function within<T>(what: string, ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no outcome in ${ms / 1000} s`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** A server log's last error lines, each cut short (a failed query's message carries its whole SQL and params). */
function lastErrors(log: string, count = 8): string {
  const errors = log.split("\n").flatMap((line) => {
    // Next's own lines (its banner, a crash it prints) are text: keep those that speak of an error.
    if (!line.startsWith("{")) return /error/i.test(line) ? [line] : [];
    try {
      const entry = JSON.parse(line) as { level?: string; msg?: string; error?: { message?: string } };
      return entry.level === "error" || entry.level === "fatal"
        ? [`${entry.msg}: ${(entry.error?.message ?? "").replace(/\s+/g, " ")}`]
        : [];
    } catch {
      return /error/i.test(line) ? [line] : [];
    }
  });
  return errors
    .slice(-count)
    .map((line) => (line.length > 400 ? `${line.slice(0, 400)}…` : line))
    .join("\n");
}

interface Side {
  name: "new" | "previous";
  server: TestServer;
  /** Its row in `instances` (what `runs.owner` holds). */
  instance: string;
}

interface Case {
  threadId: string;
  orderId: string;
  filedOn: Side;
  /** Each answer given, in order: the question and the release it went through. */
  answers: { action: string; via: Side["name"] }[];
}

describe("schema skew: the previous release beside this one, on a database this one migrated", () => {
  let previous: PreviousRelease | undefined;
  let prepared: Awaited<ReturnType<typeof prepareDatabase>>;
  let provider: FakePaymentProvider;
  const servers: TestServer[] = [];
  const sides: Side[] = [];
  /** Every response either server gave this test, by server: a 5xx anywhere fails it (not only where asserted). */
  const statuses: { server: Side["name"]; method: string; path: string; status: number }[] = [];
  const realFetch = globalThis.fetch;

  beforeAll(async () => {
    previous = buildPreviousRelease();
    // Migrated by this checkout (prepareDatabase applies this tree's drizzle/), as the new release's first instance
    // does during a rollout, before any instance of the release before it is gone.
    prepared = await prepareDatabase("skew", { prefix: "ORD-3", count: PER_SIDE * 2 });
    provider = await startFakePaymentProvider();
    const env = {
      PAYMENT_URL: provider.url,
      EFFECT_POLL_MS: "100",
      EFFECT_RETRY_BASE_MS: "50",
      EFFECT_RETRY_MAX_MS: "200",
      RUN_SWEEP_INTERVAL_MS: "500",
    };
    // Record every answer of the two servers (the HttpAgent behind pausedAtApproval fetches through here too).
    globalThis.fetch = async (input, init) => {
      const res = await realFetch(input, init);
      const url = new URL(input instanceof Request ? input.url : String(input));
      const side = sides.find((s) => new URL(s.server.url).origin === url.origin);
      if (side) {
        const method = init?.method ?? (input instanceof Request ? input.method : "GET");
        statuses.push({ server: side.name, method, path: url.pathname, status: res.status });
      }
      return res;
    };
    // The new release first (it owns the schema), then an instance of the previous one starting on it — what a
    // rollout does when an old instance restarts or scales out before the rollout reaches it.
    for (const name of ["new", "previous"] as const) {
      const before = new Set(
        (await prepared.sql.rows<{ id: string }>("SELECT id FROM instances")).map((r) => r.id),
      );
      const server = await startTestServer({
        databaseUrl: prepared.url,
        ...(name === "new" ? { env } : { cwd: previous.dir, env: { ...env, NEXT_DIST_DIR: "" } }),
      });
      servers.push(server);
      const instance = (await prepared.sql.rows<{ id: string }>("SELECT id FROM instances"))
        .map((r) => r.id)
        .find((id) => !before.has(id));
      if (!instance) throw new Error(`the ${name} release registered no instance`);
      sides.push({ name, server, instance });
    }
  }, 900_000);

  afterAll(async () => {
    globalThis.fetch = realFetch;
    await cleanUp(servers, prepared);
    await provider?.close();
    previous?.remove();
  });

  const side = (name: Side["name"]) => sides.find((s) => s.name === name)!;
  /** The threads the first test drove to the end (the second moves what was written of them in clear). */
  let cases: Case[] = [];
  const other = (s: Side) => sides.find((o) => o !== s)!;

  /** The thread's open questions, from the ledger. */
  const pendingOf = (threadId: string) =>
    prepared.sql.rows<{ interrupt_id: string; action: string }>(
      "SELECT interrupt_id, action FROM decisions WHERE thread_id = $1 AND status = 'pending' ORDER BY created_at",
      [threadId],
    );

  /** What a supervisor answers to each question of a card refund (filed by the intake key: four-eyes holds). */
  const answerTo = (action: string): { answer: unknown; who: Who } => {
    if (action === "refund_approval") return { answer: { decision: "approve" }, who: "supervisor" };
    if (action === "confirm_email") return { answer: { choice: "send" }, who: "supervisor" };
    throw new Error(`a card refund asked ${action}: this test answers only the approval and the email`);
  };

  /**
   * Answer the thread's questions until it completes: the first through the release it was not filed on, the next
   * back through the one it was. Every answer must be taken (2xx): both releases run the same agent version.
   */
  async function driveToEnd(c: Case): Promise<void> {
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const [thread] = await prepared.sql.rows<{ status: string }>(
        "SELECT status FROM threads WHERE id = $1",
        [c.threadId],
      );
      if (thread?.status === "completed") return;
      if (thread?.status === "failed" || thread?.status === "needs_attention") {
        throw new Error(`thread ${c.threadId} (filed on ${c.filedOn.name}) is ${thread.status}`);
      }
      const [open] = await pendingOf(c.threadId);
      const active = await prepared.sql.count("runs", "thread_id = $1 AND status IN ('queued', 'running')", [
        c.threadId,
      ]);
      if (!open || active > 0 || thread?.status !== "interrupted") {
        await new Promise((r) => setTimeout(r, 150));
        continue;
      }
      const via = c.answers.length % 2 === 0 ? other(c.filedOn) : c.filedOn;
      const { answer, who } = answerTo(open.action);
      const res = await authedFetch(
        `${via.server.url}/api/threads/${c.threadId}/decisions/${open.interrupt_id}`,
        { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ answer }) },
        who,
      );
      if (res.status >= 300) {
        throw new Error(`${open.action} on ${c.threadId} via ${via.name}: ${res.status} ${await res.text()}`);
      }
      await res.body?.cancel();
      c.answers.push({ action: open.action, via: via.name });
    }
    throw new Error(`thread ${c.threadId} (filed on ${c.filedOn.name}) did not complete in 60 s`);
  }

  it("the previous release knows a prefix of this one's migrations, and both start healthy and ready", async () => {
    const ours = migrationTags(process.cwd());
    const theirs = migrationTags(previous!.dir);
    // Drizzle applies what is newer than the newest applied migration: on this database the previous release's
    // migrator applies nothing. A migration only it had (one dropped since) would never be applied at all.
    expect(ours.slice(0, theirs.length)).toEqual(theirs);
    console.log(
      `[skew] previous release ${previous!.commit.slice(0, 7)} knows ${theirs.length} of ${ours.length} migrations` +
        (ours.length > theirs.length
          ? ` (newer: ${ours.slice(theirs.length).join(", ")})`
          : " (no skew yet)") +
        (previous!.buildSeconds ? `; built in ${previous!.buildSeconds} s` : "; reused build"),
    );
    for (const s of sides) {
      for (const path of ["/api/health", "/api/health?probe=ready"]) {
        const res = await fetch(`${s.server.url}${path}`);
        expect(res.status, `${s.name} ${path}`).toBe(200);
        expect(((await res.json()) as { status: string }).status, `${s.name} ${path}`).toBe("ok");
      }
    }
  });

  it("decisions go through either release on threads the other paused; each ends once, paid once", async () => {
    // Which release broke, and how, is in its log (a schema it cannot use fails its queries, not this process's).
    onTestFailed(() => {
      for (const s of sides)
        console.log(`[skew] ${s.name} release, its last errors:\n${lastErrors(s.server.log())}`);
    });
    cases = await Promise.all(
      Array.from({ length: PER_SIDE * 2 }, async (_, n): Promise<Case> => {
        const filedOn = side(n % 2 === 0 ? "new" : "previous");
        const threadId = await within(
          `filing ${order(n)} on the ${filedOn.name} release`,
          30_000,
          pausedAtApproval(filedOn.server.url, order(n), "intake"),
        );
        return { threadId, orderId: order(n), filedOn, answers: [] };
      }),
    );
    await Promise.all(cases.map((c) => driveToEnd(c)));

    // Each approval went through the release the ticket was not filed on, the email back through the other.
    for (const c of cases) {
      expect(c.answers, c.threadId).toEqual([
        { action: "refund_approval", via: other(c.filedOn).name },
        { action: "confirm_email", via: c.filedOn.name },
      ]);
    }
    const ids = cases.map((c) => c.threadId);
    expect(await prepared.sql.count("threads", "id = ANY($1) AND status = 'completed'", [ids])).toBe(
      cases.length,
    );
    expect(
      await prepared.sql.count("decisions", "thread_id = ANY($1) AND status IN ('pending', 'answered')", [
        ids,
      ]),
    ).toBe(0);
    // Both releases executed graph runs on the skewed schema, not only served requests.
    const owners = await prepared.sql.rows<{ owner: string; runs: number }>(
      "SELECT owner, count(*)::int AS runs FROM runs WHERE thread_id = ANY($1) GROUP BY owner",
      [ids],
    );
    expect(owners.map((o) => o.owner).sort()).toEqual(sides.map((s) => s.instance).sort());
    // Each release wrote only what the other can read (`instances.reads`): a format the previous release does not read
    // (the thread's rows sealed, when it opens only sealed checkpoints; the ticket sealed, when it opens sealed rows but
    // not sealed records) is not written while it serves.
    const [previousReads] = await prepared.sql.rows<{ reads: string[] | null }>(
      "SELECT reads FROM instances WHERE id = $1",
      [side("previous").instance],
    );
    const reads = new Set(previousReads?.reads ?? []);
    const sealedRows = await prepared.sql.count("events", "thread_id = ANY($1) AND event ? '$sealed'", [ids]);
    const sealedValues = await prepared.sql.count(
      "checkpoint.checkpoint_blobs",
      "thread_id = ANY($1) AND type LIKE 'sealed:%'",
      [ids],
    );
    const sealedRecords = await prepared.sql.count(
      "threads",
      "id = ANY($1) AND customer_message LIKE 'sealed:v1:%'",
      [ids],
    );
    expect({
      sealedRows: sealedRows > 0,
      sealedValues: sealedValues > 0,
      sealedRecords: sealedRecords > 0,
    }).toEqual({
      sealedRows: reads.has("sealed-rows"),
      sealedValues: reads.has("sealed"),
      sealedRecords: reads.has("sealed-records"),
    });

    // Every refund at the provider once, for the whole €500.00 order approved.
    await waitForEffectsToSettle(prepared.sql, 60_000);
    expect(
      await prepared.sql.count("effects", "status IN ('queued', 'sending', 'failed', 'unconfirmed')"),
    ).toBe(0);
    const paid = new Map<string, number>();
    for (const p of provider.created) paid.set(p.orderId, (paid.get(p.orderId) ?? 0) + 1);
    expect(cases.map((c) => [c.orderId, paid.get(c.orderId) ?? 0])).toEqual(cases.map((c) => [c.orderId, 1]));
    expect(provider.created).toHaveLength(cases.length);
    expect(provider.created.filter((p) => p.amountCents !== 50_000)).toEqual([]);

    // Every thread reads on both releases: its view (completed), its page and its history, page and API.
    for (const c of cases) {
      for (const s of sides) {
        const view = await authedFetch(`${s.server.url}/api/threads/${c.threadId}`, {}, "viewer");
        expect(view.status, `${s.name} view of ${c.threadId}`).toBe(200);
        expect(((await view.json()) as { status: string }).status).toBe("completed");
        for (const path of [
          `/threads/${c.threadId}`,
          `/threads/${c.threadId}/history`,
          `/api/threads/${c.threadId}/history`,
        ]) {
          const res = await authedFetch(`${s.server.url}${path}`, {}, "viewer");
          expect(res.status, `${s.name} ${path}`).toBe(200);
          await res.body?.cancel();
        }
      }
    }
    for (const s of sides) expect((await fetch(`${s.server.url}/api/health`)).status, s.name).toBe(200);

    expect(statuses.filter((r) => r.status >= 500)).toEqual([]);
    const through = (name: Side["name"]) => statuses.filter((r) => r.server === name).length;
    console.log(
      `[skew] ${cases.length} threads completed across both releases, ${provider.created.length} refunds paid, ` +
        `${owners.map((o) => `${o.runs} runs on ${sides.find((s) => s.instance === o.owner)?.name}`).join(", ")}; ` +
        `${through("new")} responses from the new release, ${through("previous")} from the previous, none ≥ 500`,
    );
  });
  it("once the previous release stops, the sealing job moves what it wrote in clear while serving; erasure then leaves nothing of a customer", async () => {
    expect(cases.length).toBeGreaterThan(0);
    const ids = cases.map((c) => c.threadId);
    const ticketsInClear = () =>
      prepared.sql.count("threads", "id = ANY($1) AND customer_message NOT LIKE 'sealed:v1:%'", [ids]);
    // While the previous release served, every ticket was written in clear (it reads no sealed ticket).
    expect(await ticketsInClear()).toBe(ids.length);
    // Its last instance stops (its shutdown records it); the move runs while the new release serves.
    await side("previous").server.stop();
    const [gone] = await prepared.sql.rows<{ stopped: boolean }>(
      "SELECT stopped_at IS NOT NULL AS stopped FROM instances WHERE id = $1",
      [side("previous").instance],
    );
    expect(gone?.stopped).toBe(true);
    const out = await runTsx("scripts/keys.ts", ["seal"], { DATABASE_URL: prepared.url });
    expect(out).toMatch(/; 0 threads, orders or accounts left/);
    expect(await ticketsInClear()).toBe(0);
    expect(
      await prepared.sql.count("orders", "id = ANY($1) AND customer_email NOT LIKE 'sealed:v1:%'", [
        cases.map((c) => c.orderId),
      ]),
    ).toBe(0);
    // Every thread still reads through the new release.
    for (const c of cases) {
      const view = await authedFetch(`${side("new").server.url}/api/threads/${c.threadId}`, {}, "viewer");
      expect(view.status, c.threadId).toBe(200);
      expect(((await view.json()) as { erased: boolean }).erased).toBe(false);
    }
    // One customer is erased: nothing of theirs is left in clear anywhere, what the previous release audited in clear
    // included (rewritten by the erasure), and the trail verifies.
    const customer = await orderCustomer(prepared.sql, cases[0]!.orderId);
    expect(customer?.email).toMatch(/@/);
    const erased = await authedFetch(
      `${side("new").server.url}/api/admin/erasure`,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: customer!.email }),
      },
      "admin",
    );
    expect(erased.status, await erased.clone().text()).toBe(200);
    const rows = <T>(text: string, params: unknown[] = []) => prepared.sql.rows<T>(text, params);
    expect(await tablesHolding(rows, customer!.email)).toEqual([]);
    expect(await rows("SELECT * FROM audit_log_verify()")).toEqual([]);
    const after = await authedFetch(
      `${side("new").server.url}/api/threads/${cases[0]!.threadId}`,
      {},
      "viewer",
    );
    expect(((await after.json()) as { erased: boolean }).erased).toBe(true);
  });
});
