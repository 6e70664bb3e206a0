import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

/*
 * Behind a transaction pooler a session is a loan for one transaction: a lock or a LISTEN taken outside a transaction
 * stays with a server connection another client gets next. No code or migration takes a session-level advisory lock
 * (the transaction forms, `pg_advisory_xact_lock` / `pg_try_advisory_xact_lock`, are released with their transaction),
 * and LISTEN connects only where `listenUrl()` says (e2e/pooler runs the HTTP suites through PgBouncer).
 */
const ROOT = process.cwd();

function files(dir: string, keep: (path: string) => boolean): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) return files(full, keep);
    return keep(full) ? [full] : [];
  });
}

const sources = [
  ...files(join(ROOT, "lib"), (f) => f.endsWith(".ts") && !/\.(test|int\.test|property\.test)\.ts$/.test(f)),
  ...files(join(ROOT, "drizzle"), (f) => f.endsWith(".sql")),
];
const SESSION_LOCK = /pg_(try_)?advisory_(lock|unlock)(_shared|_all)?\s*\(/i;

it("no session-level advisory lock in the code or the current migrations", () => {
  expect(sources.length).toBeGreaterThan(50);
  const found = sources
    .filter((f) => !f.endsWith(".sql"))
    .filter((f) => SESSION_LOCK.test(readFileSync(f, "utf8")))
    .map((f) => relative(ROOT, f));
  expect(found).toEqual([]);
  // Nor does any migration (a database function runs inside its caller's transaction: a session lock would outlive it).
  const sql = sources
    .filter((f) => f.endsWith(".sql"))
    .filter((f) => SESSION_LOCK.test(readFileSync(f, "utf8")))
    .map((f) => relative(ROOT, f));
  expect(sql).toEqual([]);
});

it("LISTEN connects only through listenUrl()", () => {
  const listening = sources
    .filter((f) => f.endsWith(".ts"))
    .filter((f) => /LISTEN \$\{/.test(readFileSync(f, "utf8")))
    .map((f) => relative(ROOT, f));
  expect(listening.length).toBeGreaterThan(0);
  for (const f of listening) expect(readFileSync(join(ROOT, f), "utf8"), f).toMatch(/listenUrl\(\)/);
});
