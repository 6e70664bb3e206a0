import { emailOf, signIn, TEST_PASSWORD } from "../support/auth";
import type { TestServer } from "../support/server";
import { cleanUp, prepareDatabase, startTestServer } from "./setup";

/**
 * Verified sessions are cached in each server process (lib/auth/session-cache.ts). A revocation must still take
 * effect within a second everywhere — on the server that made it and on another one sharing the database — however
 * it was made: sign-out, a session deleted or a user disabled in plain SQL. Each case first makes the session's
 * cookie a cached one on both servers (so a cache that ignored revocations would keep answering 200 for its TTL).
 */
describe("session cache: revocations reach every server within 1 s", () => {
  let prepared: Awaited<ReturnType<typeof prepareDatabase>>;
  let a: TestServer | undefined;
  let b: TestServer | undefined;

  beforeAll(async () => {
    prepared = await prepareDatabase("sesscache");
    a = await startTestServer({ databaseUrl: prepared.url });
    b = await startTestServer({ databaseUrl: prepared.url });
  });
  afterAll(async () => {
    await cleanUp([a, b], prepared);
  });

  const status = async (server: TestServer, cookie: string) =>
    (await fetch(`${server.url}/api/threads`, { headers: { cookie } })).status;

  /** Sign in as a fresh user and have both servers answer (and cache) the session. */
  async function cachedSession(email: string) {
    const created = await fetch(`${a!.url}/api/admin/users`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie: await signIn(a!.url, "admin@test.local") },
      body: JSON.stringify({ email, name: email, password: TEST_PASSWORD, role: "operator" }),
    });
    expect(created.status).toBe(201);
    const cookie = await signIn(a!.url, email);
    for (let i = 0; i < 3; i++) {
      expect(await status(a!, cookie)).toBe(200);
      expect(await status(b!, cookie)).toBe(200);
    }
    return cookie;
  }

  /** ms until `server` refuses the cookie (401), polling; fails the test past 1 s. */
  async function refusedWithin(server: TestServer, cookie: string): Promise<number> {
    const t0 = Date.now();
    for (;;) {
      const s = await status(server, cookie);
      if (s === 401) return Date.now() - t0;
      expect(s).toBe(200);
      if (Date.now() - t0 > 1_000) throw new Error(`${server.url} still accepts the session after 1 s`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it("ends a session at sign-out, on the server signed out from and on the other", async () => {
    const cookie = await cachedSession("cache-out@test.local");
    const out = await fetch(`${a!.url}/api/auth/sign-out`, {
      method: "POST",
      headers: { cookie, "content-type": "application/json", origin: a!.url },
      body: "{}",
    });
    expect(out.status).toBe(200);
    expect(await status(a!, cookie)).toBe(401);
    await refusedWithin(b!, cookie);
  });

  it("ends the sessions of a user disabled in plain SQL", async () => {
    const cookie = await cachedSession("cache-disabled@test.local");
    await prepared.sql.rows("UPDATE auth_users SET disabled = true WHERE email = $1", [
      "cache-disabled@test.local",
    ]);
    await refusedWithin(a!, cookie);
    await refusedWithin(b!, cookie);
  });

  it("ends a session deleted in plain SQL", async () => {
    const cookie = await cachedSession("cache-deleted@test.local");
    await prepared.sql.rows(
      "DELETE FROM auth_sessions WHERE user_id = (SELECT id FROM auth_users WHERE email = $1)",
      ["cache-deleted@test.local"],
    );
    await refusedWithin(a!, cookie);
    await refusedWithin(b!, cookie);
  });

  it("keeps other users signed in", async () => {
    const cookie = await signIn(a!.url, emailOf("viewer"));
    expect(await status(a!, cookie)).toBe(200);
    expect(await status(b!, cookie)).toBe(200);
  });
});
