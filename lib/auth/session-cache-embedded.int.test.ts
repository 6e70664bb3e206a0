import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Backend, openBackend } from "@/e2e/support/backends";
import { listenEmbedded } from "@/lib/runtime/process/listener";
import { cachedCredential } from "./session-cache";

/*
 * On embedded PGlite the server is the database's only client, so it hears its own NOTIFYs: the session cache serves
 * there too, and a change to the auth tables (by any statement, here plain SQL) still empties it within 1 s.
 */
describe("session cache on embedded PGlite", () => {
  let backend: Awaited<ReturnType<typeof openBackend>>;
  const kind: Backend = "pglite";

  beforeAll(async () => {
    backend = await openBackend(kind);
    await listenEmbedded(backend.database);
  }, 120_000);
  afterAll(async () => {
    await backend?.close();
  });

  async function enabled(id: string): Promise<boolean> {
    const rows = await backend.database.sql.query<{ disabled: boolean }>(
      "SELECT disabled FROM auth_users WHERE id = $1",
      [id],
    );
    return rows[0]?.disabled === false;
  }

  it("serves a verified credential from memory, and forgets it when a user is disabled or a session deleted in SQL", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uuid(),
        fc.constantFrom(
          "UPDATE auth_users SET disabled = true WHERE id = $1",
          "DELETE FROM auth_sessions WHERE user_id = $1",
          "UPDATE auth_users SET role = 'viewer' WHERE id = $1 AND false",
        ),
        async (id, revoke) => {
          await backend.database.sql.query(
            "INSERT INTO auth_users (id, name, email, role) VALUES ($1, 'U', $1 || '@test.local', 'supervisor')",
            [id],
          );
          let lookups = 0;
          const lookup = async () => {
            lookups += 1;
            return (await enabled(id)) ? { value: id } : null;
          };
          expect(await cachedCredential(`cookie:${id}`, lookup)).toBe(id);
          expect(await cachedCredential(`cookie:${id}`, lookup)).toBe(id);
          // The second answer came from the cache (without a listener the cache is off and every call looks up).
          expect(lookups).toBe(1);
          await backend.database.sql.query(revoke, [id]);
          const deadline = Date.now() + 1_000;
          while (lookups === 1 && Date.now() < deadline) {
            await cachedCredential(`cookie:${id}`, lookup);
            await new Promise((r) => setTimeout(r, 10));
          }
          // The change reached the cache: the credential is looked up again (and refused when the user is disabled).
          expect(lookups).toBeGreaterThan(1);
          expect(await cachedCredential(`cookie:${id}`, lookup)).toBe((await enabled(id)) ? id : null);
        },
      ),
      { numRuns: 12 },
    );
  });
});
