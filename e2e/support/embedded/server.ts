import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestServer, type TestServer } from "../server";

/**
 * `next start` on a fresh embedded database (no DATABASE_URL: PGlite in a temporary directory), signed in like any
 * test server. `stop()` stops it and removes the directory.
 */
export async function startEmbeddedServer(
  env: Record<string, string> = {},
): Promise<{ server: TestServer; stop(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), "hitl-embedded-"));
  const server = await startTestServer({
    // The sign-in helper keys its test users by this string; the server itself gets no DATABASE_URL.
    databaseUrl: `pglite:${dataDir}`,
    env: { DATABASE_URL: "", PGLITE_DATA_DIR: join(dataDir, "db"), ...env },
  });
  return {
    server,
    async stop() {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
