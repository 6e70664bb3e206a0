import { spawn, spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pausedAtApproval } from "../api/client";
import { cleanUp, prepareDatabase, startTestServer } from "../api/setup";
import { authedFetch } from "../support/auth";
import { type FakePaymentProvider, startFakePaymentProvider } from "../support/fake-payment";
import type { TestServer } from "../support/server";
import { type ShadowCandidate, shadowCandidateTree } from "./tree";

/*
 * The deploy shadow (`npm run deploy:shadow`, run from a candidate build): threads paused at a €120.00 approval of a
 * €500.00 order under this build, then seven candidate builds replayed against the same database while this build keeps
 * serving it. The three procedure deploys (a node added, a state field renamed with version 1 kept, the rename with its
 * migration) and a threshold that only applies before the approval change nothing a paused thread would do: exit 0,
 * every thread "same". A cap on refunds changes the amounts and a refund method changes the effects: exit 1, named per
 * thread; the careless rename (no bump) is an error — the candidate refuses the threads' version. Nothing is
 * written: the business tables (full-row digests) and the audit chain are identical, and the payment provider — which
 * the serving build's dispatcher would pay any effect that leaked — receives nothing.
 */

const THREADS = 3;
const order = (n: number) => `ORD-5${String(n).padStart(3, "0")}`;

/** Tables whose every row the shadow must leave as it was (row digests), and the audit chain's head. */
const TABLES = [
  "threads",
  "runs",
  "decisions",
  "decision_receipts",
  "refunds",
  "effects",
  "outbox",
  "audit_log",
  "checkpoints",
  "checkpoint_writes",
  "checkpoint_blobs",
  "events",
];

interface Ran {
  status: number | null;
  stdout: string;
  stderr: string;
  report: Report | null;
}

interface Report {
  exitCode: number;
  summary: Record<string, number>;
  threads: {
    threadId: string;
    verdict: string;
    versions: string;
    consequential: boolean;
    details: string[];
  }[];
}

const EXPECTED: [ShadowCandidate, exit: number, verdict: string][] = [
  ["add_node", 0, "same"],
  ["rename_field", 0, "same"],
  ["rename_with_migration", 0, "same"],
  ["auto_approve_limit", 0, "same"],
  ["refund_cap", 1, "amounts_changed"],
  ["store_credit", 1, "effects_changed"],
  ["careless_rename", 1, "error"],
];

/** The versions each thread would run on, as the report says them. */
const VERSIONS: Partial<Record<ShadowCandidate, string>> = {
  add_node: "1 → 1",
  rename_field: "1 → 1",
  rename_with_migration: "1 → 2 (migrated)",
  refund_cap: "1 → 1",
};

describe("the deploy shadow says what a candidate build would do with paused threads, and writes nothing", () => {
  let prepared: Awaited<ReturnType<typeof prepareDatabase>>;
  let provider: FakePaymentProvider;
  let server: TestServer | undefined;
  const paused: string[] = [];

  const snapshot = async () => {
    const digests: Record<string, string> = {};
    for (const table of TABLES) {
      const [row] = await prepared.sql.rows<{ n: number; digest: string | null }>(
        `SELECT count(*)::int AS n, md5(string_agg(t::text, '|' ORDER BY t::text)) AS digest FROM ${table} t`,
      );
      digests[table] = `${row?.n} ${row?.digest}`;
    }
    return digests;
  };

  beforeAll(async () => {
    prepared = await prepareDatabase("shadow", { prefix: "ORD-5", count: THREADS });
    provider = await startFakePaymentProvider();
    server = await startTestServer({ databaseUrl: prepared.url, env: { PAYMENT_URL: provider.url } });
    for (let i = 0; i < THREADS; i++) {
      paused.push(
        await pausedAtApproval(server.url, order(i), "intake", `Please refund €120 of ${order(i)}.`),
      );
    }
    await runCandidates();
  }, 900_000);
  afterAll(async () => {
    await cleanUp([server], prepared);
    await provider?.close();
  });

  /** Run the shadow from a candidate tree against the database, this checkout as the serving build. */
  const shadow = (dir: string): Promise<Ran> =>
    new Promise((done) => {
      const child = spawn(
        join(dir, "node_modules/.bin/tsx"),
        ["--conditions=react-server", "scripts/deploy-shadow.ts", "--baseline", process.cwd(), "--json"],
        {
          cwd: dir,
          env: { ...process.env, DATABASE_URL: prepared.url, NODE_ENV: "production", LOG_LEVEL: "warn" },
          timeout: 240_000,
        },
      );
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk) => {
        stdout += chunk;
      });
      child.stderr.on("data", (chunk) => {
        stderr += chunk;
      });
      child.on("close", (status) => {
        const last = stdout.trim().split("\n").at(-1) ?? "";
        done({ status, stdout, stderr, report: last.startsWith("{") ? (JSON.parse(last) as Report) : null });
      });
    });

  /** Every candidate's run, two at a time (the machine has two cores), between two snapshots of the real tables. */
  const runs = new Map<ShadowCandidate, Ran>();
  let before: Record<string, string> = {};
  let after: Record<string, string> = {};
  const runCandidates = async () => {
    before = await snapshot();
    const queue = EXPECTED.map(([name]) => name);
    const worker = async () => {
      for (let name = queue.shift(); name; name = queue.shift()) {
        const tree = shadowCandidateTree(name);
        try {
          runs.set(name, await shadow(tree.dir));
        } finally {
          tree.remove();
        }
      }
    };
    await Promise.all([worker(), worker()]);
    after = await snapshot();
  };

  it.each(EXPECTED)("%s: exit %i, every paused thread %s", (name, exit, verdict) => {
    const { status, stdout, stderr, report } = runs.get(name) ?? {
      status: null,
      stdout: "",
      stderr: "not run",
    };
    expect(report, `${stdout}\n${stderr}`).toBeTruthy();
    expect(report!.threads.map((t) => t.threadId).sort()).toEqual([...paused].sort());
    expect(
      report!.threads.map((t) => `${t.verdict} ${t.details.join("; ")}`),
      stdout,
    ).toEqual(paused.map(() => expect.stringMatching(new RegExp(`^${verdict}`))));
    expect(status, stdout).toBe(exit);
    if (VERSIONS[name]) for (const t of report!.threads) expect(t.versions).toBe(VERSIONS[name]);
    if (name === "careless_rename") {
      for (const t of report!.threads)
        expect(t.details.join(" ")).toMatch(/conflict:graph_version .*refuses refund version 1/);
    }
    if (name === "refund_cap") {
      for (const t of report!.threads) expect(t.details.join(" ")).toMatch(/12000 → 10000 cents/);
    }
    // The words a person reads, per thread and in the summary.
    expect(stdout).toMatch(/deploy:shadow: 3 thread\(s\): 3 /);
  });

  it("nothing any shadow did is in the real tables, and nothing reached the payment provider", () => {
    expect(runs.size).toBe(EXPECTED.length);
    expect(after).toEqual(before);
    expect(provider.created).toHaveLength(0);
  });

  it("the admin page shows the last report; a usage error exits 2 and writes nothing", async () => {
    const page = await authedFetch(`${server!.url}/admin`, {}, "admin");
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("Deploy shadow");
    expect(html).toMatch(/effects changed|amounts changed|error/);
    const reports = await prepared.sql.count("deploy_shadow_reports");
    const usage = spawnSync(
      join(process.cwd(), "node_modules/.bin/tsx"),
      ["--conditions=react-server", "scripts/deploy-shadow.ts", "--sample", "0"],
      { encoding: "utf8", env: { ...process.env, DATABASE_URL: prepared.url } },
    );
    expect(usage.status).toBe(2);
    expect(usage.stderr).toMatch(/--sample needs a whole number/);
    expect(await prepared.sql.count("deploy_shadow_reports")).toBe(reports);
    // The threads are still paused at their approval, and can be approved as ever.
    for (const threadId of paused) {
      const view = await (await authedFetch(`${server!.url}/api/threads/${threadId}`)).json();
      expect(view.status).toBe("interrupted");
    }
  });
});
