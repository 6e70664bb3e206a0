import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";

/*
 * One data-access convention (CONVENTIONS.md habit 18, issue 51): request and job entry points get the database
 * handle (`getDatabase()`) and pass it down; a service below them takes it as one object (`{ db | tx, … }`, or
 * `{ database, … }` — the whole handle — when it starts a run, whose execution needs the checkpoint pool too) and
 * never fetches its own. This test scans the product files (not tests) for calls of `getDatabase(` and fails for any file
 * that is neither an entry point nor one of the few documented exceptions below them. Both lists only shrink: an
 * entry whose file no longer calls it fails too, so it is removed when its call goes.
 */

const root = resolve(__dirname, "..");

/** Entry points named one by one (pages under app/ and CLIs under scripts/ are entry points by where they live). */
const ENTRY_POINTS: Record<string, string> = {
  "lib/http/route.ts": "the route wrapper: hands every API route handler its handle",
  "lib/server-start.ts": "the composition root: migrations, the registry and the workers at process start",
  "lib/delivery/dispatcher.ts": "the effects dispatcher: a job loop started at process start",
  "lib/runtime/runs/recovery.ts": "the run sweeper and heartbeat: job loops started at process start",
  "lib/queue/deadlines.ts": "the deadlines sweep: a timer started at process start",
  "lib/runtime/retention/retention-schedule.ts": "the retention schedule: a timer started at process start",
  "lib/delivery/reconcile-schedule.ts": "the reconciliation schedule: a timer started at process start",
  "lib/runtime/process/audit-chainer.ts": "the audit chainer: a timer started at process start",
  "lib/runtime/process/sampler.ts": "the queue sampler: a timer started at process start",
  "lib/runtime/process/listener.ts": "the NOTIFY listener: a process-wide job started at process start",
  "lib/runtime/process/shutdown.ts": "the shutdown: releases this process's runs when it stops",
  "lib/runtime/process/health.ts":
    "the health probe (GET /api/health, outside the route wrapper: it must answer when the database does not)",
};

/**
 * Calls below an entry point that stay, each with its reason. At most five (issue 51's acceptance).
 */
const BELOW: Record<string, string> = {
  "lib/auth/auth.ts":
    "the process's better-auth instance is a singleton made on first use on the process's database",
  "lib/runtime/agents/registry.ts":
    "compiled graphs are a process-wide cache made on first use; their checkpointer is the process's own pool",
};

/** Pages (`app/**​/page.tsx`) and CLIs (`scripts/`) are entry points wherever they are. */
function isEntryByPlace(file: string): boolean {
  return /^app\/.*\/?page\.tsx$/.test(file) || file.startsWith("scripts/");
}

function productFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === "node_modules" ? [] : productFiles(path);
    return /\.(ts|tsx|mts)$/.test(name) && !/\.(test|conformance)\.tsx?$/.test(name) ? [path] : [];
  });
}

/** How many times a file calls `getDatabase(` (comments and the function's own definition aside). */
function callsIn(text: string): number {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1");
  return [...code.matchAll(/(?<!function\s)\bgetDatabase\(/g)].length;
}

function callers(): Map<string, number> {
  const found = new Map<string, number>();
  const files = ["lib", "app", "components", "scripts"].flatMap((dir) => productFiles(join(root, dir)));
  for (const path of [...files, join(root, "instrumentation.ts")]) {
    const n = callsIn(readFileSync(path, "utf8"));
    if (n > 0) found.set(relative(root, path), n);
  }
  return found;
}

describe("the database handle is fetched at entry points and passed down", () => {
  const found = callers();

  it("finds the calls it looks for", () => {
    expect(callsIn("const { db } = await getDatabase();\n// getDatabase() in a comment")).toBe(1);
    expect(callsIn("export function getDatabase(): Promise<Database> {")).toBe(0);
    expect(found.get("lib/http/route.ts")).toBeGreaterThan(0);
  });

  it("no file below an entry point calls getDatabase() unless it is a documented exception", () => {
    const unexpected = [...found.keys()].filter(
      (file) => !(file in ENTRY_POINTS || file in BELOW || isEntryByPlace(file)),
    );
    expect(
      unexpected,
      "take the handle as a parameter ({ db | tx, … }) from the entry point instead of calling getDatabase()",
    ).toEqual([]);
  });

  it("a page fetches its handle once and passes it down", () => {
    const twice = [...found].filter(([file, n]) => file.startsWith("app/") && n > 1).map(([file]) => file);
    expect(twice).toEqual([]);
  });

  it("every listed entry still calls it (the lists only shrink) and each has its reason", () => {
    for (const list of [ENTRY_POINTS, BELOW]) {
      for (const [file, reason] of Object.entries(list)) {
        expect(found.has(file), `${file} no longer calls getDatabase(): remove it from the list`).toBe(true);
        expect(reason.length, `${file} needs its reason`).toBeGreaterThan(10);
      }
    }
  });

  it("at most five calls stay below the entry points", () => {
    expect(Object.keys(BELOW).length).toBeLessThanOrEqual(5);
  });
});
