import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { seedBuildCache } from "./tree";

/*
 * The release before this one, built from git as it shipped: the commit pinned in previous-release.json, extracted
 * with `git archive` (committed files only, nothing of this working tree) and `next build` there. The skew test runs
 * it beside this checkout's own build, on one database this checkout migrated. Moving the pin is a one-line change
 * made when a release lands.
 */

const ROOT = process.cwd();
const PIN = join(ROOT, "e2e", "upgrade", "previous-release.json");
/** Written into a built tree: a reused tree built from another pin is rebuilt, not served as "the previous release". */
const MARKER = ".previous-release-commit";

export interface PreviousRelease {
  /** The pinned commit (40 hex digits). */
  commit: string;
  /** Its built tree: serve it with `startTestServer({ cwd: dir, env: { NEXT_DIST_DIR: "" } })`. */
  dir: string;
  /** Seconds its `next build` took (0 when a tree built before was reused). */
  buildSeconds: number;
  remove(): void;
}

/** The pinned commit, checked for shape (a short hash would name a different commit one day). */
export function previousReleaseCommit(): string {
  const pin = JSON.parse(readFileSync(PIN, "utf8")) as { commit?: unknown };
  if (typeof pin.commit !== "string" || !/^[0-9a-f]{40}$/.test(pin.commit)) {
    throw new Error(`${PIN}: "commit" must be a full 40-hex commit hash, got ${JSON.stringify(pin.commit)}`);
  }
  return pin.commit;
}

/** The migration tags a tree ships (drizzle's journal), in the order they apply. */
export function migrationTags(tree: string): string[] {
  const journal = JSON.parse(readFileSync(join(tree, "drizzle", "meta", "_journal.json"), "utf8")) as {
    entries: { tag: string }[];
  };
  return journal.entries.map((e) => e.tag);
}

/**
 * Extract the pinned commit into a new directory, give it node_modules and build it. With `UPGRADE_PREVIOUS_DIR` set
 * (while working on the suite) a tree built there before from the same commit is reused, and kept.
 */
export function buildPreviousRelease(log: (line: string) => void = console.log): PreviousRelease {
  const commit = previousReleaseCommit();
  const reuse = process.env.UPGRADE_PREVIOUS_DIR;
  const built = (dir: string) =>
    existsSync(join(dir, ".next", "BUILD_ID")) &&
    existsSync(join(dir, MARKER)) &&
    readFileSync(join(dir, MARKER), "utf8").trim() === commit;
  if (reuse && built(reuse)) return { commit, dir: reuse, buildSeconds: 0, remove: () => {} };

  // A shallow or partial clone may not have it: fetch it from where the clone came from, and if that fails too, say
  // so, rather than letting `git archive` fail obscurely.
  const has = () => spawnSync("git", ["cat-file", "-e", `${commit}^{commit}`], { cwd: ROOT }).status === 0;
  if (!has()) {
    log(`[skew] ${commit.slice(0, 7)} is not in this clone: fetching it from origin…`);
    spawnSync("git", ["fetch", "--quiet", "origin", commit], {
      cwd: ROOT,
      stdio: "ignore",
      timeout: 120_000,
    });
    if (!has())
      spawnSync("git", ["fetch", "--quiet", "--unshallow"], { cwd: ROOT, stdio: "ignore", timeout: 300_000 });
  }
  if (!has()) {
    throw new Error(
      `previous release ${commit} (pinned in e2e/upgrade/previous-release.json) is not in this clone's object ` +
        "database: fetch it (a shallow clone: `git fetch --unshallow`) or move the pin to a commit you have",
    );
  }

  const dir = reuse ?? join(tmpdir(), `hitl-previous-${commit.slice(0, 7)}-${process.pid}-${Date.now()}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  // `git archive | tar -x`, without a shell: the archive (a few MB) passes through this process.
  const archive = execFileSync("git", ["archive", "--format=tar", commit], {
    cwd: ROOT,
    maxBuffer: 1 << 30,
  });
  execFileSync("tar", ["-x", "-C", dir], { input: archive });

  // Every package the previous release pins is installed here at that version (the same lock, or this one only adds
  // packages): this checkout's node_modules serves it as `npm ci` would, so hard-link it (a copy of the tree costs no
  // disk; Turbopack refuses a symlinked node_modules). Otherwise install its own.
  const sameLock = lockServes(join(ROOT, "package-lock.json"), join(dir, "package-lock.json"));
  if (sameLock) {
    execFileSync("cp", ["-al", join(ROOT, "node_modules"), join(dir, "node_modules")]);
  } else {
    log(
      `[previous] ${commit.slice(0, 7)} pins packages this checkout does not have at its versions: npm ci…`,
    );
    const install = spawnSync("npm", ["ci", "--no-audit", "--no-fund"], {
      cwd: dir,
      encoding: "utf8",
      env: { ...process.env, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: "1" },
    });
    if (install.status !== 0) {
      throw new Error(
        `previous release ${commit}: npm ci failed\n${install.stdout.slice(-4000)}\n${install.stderr.slice(-4000)}`,
      );
    }
  }

  log(`[previous] ${commit.slice(0, 7)} at ${dir}: building…`);
  const started = Date.now();
  // Most of its modules are this checkout's as they were: compiled once, here.
  seedBuildCache(dir);
  const build = spawnSync(join(dir, "node_modules/.bin/next"), ["build"], {
    cwd: dir,
    encoding: "utf8",
    // Its default .next, whatever NEXT_DIST_DIR this run's own build uses; the type check is that release's CI's job.
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1", NEXT_DIST_DIR: "", NEXT_BUILD_SKIP_TYPECHECK: "1" },
  });
  if (build.status !== 0) {
    throw new Error(
      `previous release ${commit}: next build failed\n${build.stdout.slice(-4000)}\n${build.stderr.slice(-4000)}`,
    );
  }
  const buildSeconds = Math.round((Date.now() - started) / 1000);
  writeFileSync(join(dir, MARKER), `${commit}\n`);
  log(`[previous] ${commit.slice(0, 7)} built in ${buildSeconds} s`);
  return {
    commit,
    dir,
    buildSeconds,
    remove: () => {
      if (!reuse) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Whether the packages installed by `here` (a lock file) include every package `wanted` pins, at the same version. */
function lockServes(here: string, wanted: string): boolean {
  type Lock = { packages?: Record<string, { version?: string }> };
  const have = (JSON.parse(readFileSync(here, "utf8")) as Lock).packages ?? {};
  const want = (JSON.parse(readFileSync(wanted, "utf8")) as Lock).packages ?? {};
  return Object.entries(want).every(([path, pkg]) => path === "" || have[path]?.version === pkg.version);
}
