import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensurePrivateDir, writePrivateFile } from "@/lib/platform/private-files";
import { migrateDatabase } from "./migrate";
import { openPglite } from "./open";

/** Every path under `root` whose mode lets group or others in, with its mode. */
function looseModes(root: string): string[] {
  const loose: string[] = [];
  const walk = (path: string) => {
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) return;
    const wanted = stat.isDirectory() ? 0o700 : 0o600;
    if ((stat.mode & 0o777) !== wanted)
      loose.push(`${path.slice(root.length)} ${(stat.mode & 0o777).toString(8)}`);
    if (stat.isDirectory()) for (const entry of readdirSync(path)) walk(join(path, entry));
  };
  walk(root);
  return loose;
}

describe("the embedded database on disk", () => {
  let dir: string;
  let umask: number;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "hitl-pglite-modes-"));
    // The most permissive umask there is: nothing below may rely on the caller's.
    umask = process.umask(0);
  });
  afterAll(() => {
    process.umask(umask);
    rmSync(dir, { recursive: true, force: true });
  });

  it("creates a fresh data directory 0700 with files 0600, and tightens stray files at the next open", async () => {
    const dataDir = join(dir, "fresh", "pglite");
    const database = await openPglite(dataDir);
    try {
      await migrateDatabase(database);
      expect(looseModes(dataDir)).toEqual([]);
      expect(lstatSync(join(dir, "fresh")).mode & 0o777).toBe(0o700);
      expect(lstatSync(`${dataDir}.lock`).mode & 0o777).toBe(0o600);
    } finally {
      await database.close();
    }
    writeFileSync(join(dataDir, "stray"), "x", { mode: 0o666 });
    chmodSync(dataDir, 0o755);
    const again = await openPglite(dataDir);
    await again.close();
    expect(looseModes(dataDir)).toEqual([]);
  });

  it("writes the app's private files 0600 in a 0700 directory", () => {
    const data = join(dir, "app-data");
    ensurePrivateDir(data);
    writePrivateFile(join(data, "auth-secret"), "s3cret", { exclusive: true });
    expect(looseModes(data)).toEqual([]);
    expect(() => writePrivateFile(join(data, "auth-secret"), "other", { exclusive: true })).toThrow(/EEXIST/);
  });

  it("migrates on PGlite, where the last enabled admin cannot be removed either", async () => {
    const dataDir = join(dir, "admins");
    mkdirSync(dir, { recursive: true });
    const database = await openPglite(dataDir);
    try {
      await migrateDatabase(database);
      const insert = (id: string, role: string) =>
        database.sql.query(
          "INSERT INTO auth_users (id, name, email, role) VALUES ($1, $1, $1 || '@t.local', $2)",
          [id, role],
        );
      await insert("a1", "admin");
      await insert("a2", "admin");
      await insert("v1", "viewer");
      await database.sql.query("UPDATE auth_users SET role = 'viewer' WHERE id = 'a2'");
      await database.sql.query("UPDATE auth_users SET disabled = true WHERE id = 'v1'");
      const refusal = await database.sql
        .query("UPDATE auth_users SET disabled = true WHERE id = 'a1'")
        .then(() => null)
        .catch((e: { code?: string; message?: string }) => e);
      expect(refusal).toMatchObject({ code: "HL001", message: expect.stringMatching(/last enabled admin/) });
      await expect(database.sql.query("DELETE FROM auth_users")).rejects.toThrow(/last enabled admin/);
      const [row] = await database.sql.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM auth_users WHERE role = 'admin' AND NOT disabled",
      );
      expect(row?.n).toBe(1);
    } finally {
      await database.close();
    }
  });
});
