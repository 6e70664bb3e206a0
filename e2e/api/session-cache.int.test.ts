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

  /** Issue an intake key and have both servers verify (and cache) it: a key's request gets past sign-in (400). */
  async function cachedKey(name: string) {
    const issued = await fetch(`${a!.url}/api/admin/keys`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie: await signIn(a!.url, "admin@test.local") },
      body: JSON.stringify({ name }),
    });
    expect(issued.status).toBe(201);
    const { key, apiKey } = (await issued.json()) as { key: string; apiKey: { id: string } };
    for (let i = 0; i < 3; i++) {
      expect(await keyStatus(a!, key)).toBe(400);
      expect(await keyStatus(b!, key)).toBe(400);
    }
    return { key, id: apiKey.id };
  }
  /** A ticket filed with an empty body: 400 once the key is accepted, 401 when it is not. */
  const keyStatus = async (server: TestServer, key: string) =>
    (
      await fetch(`${server.url}/api/threads`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: "{}",
      })
    ).status;
  async function keyRefusedWithin(server: TestServer, key: string): Promise<number> {
    const t0 = Date.now();
    for (;;) {
      const s = await keyStatus(server, key);
      if (s === 401) return Date.now() - t0;
      expect(s).toBe(400);
      if (Date.now() - t0 > 1_000) throw new Error(`${server.url} still accepts the key after 1 s`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it("refuses a revoked intake key at once on the server that revoked it, and within 1 s on the other", async () => {
    const { key, id } = await cachedKey("cache-revoked");
    const revoked = await fetch(`${a!.url}/api/admin/keys/${id}/revoke`, {
      method: "POST",
      headers: { cookie: await signIn(a!.url, "admin@test.local"), origin: a!.url },
    });
    expect(revoked.status).toBe(200);
    expect(await keyStatus(a!, key)).toBe(401);
    await keyRefusedWithin(b!, key);
  });

  it("refuses an intake key revoked or deleted in plain SQL within 1 s", async () => {
    const first = await cachedKey("cache-sql-revoked");
    await prepared.sql.rows("UPDATE api_keys SET revoked_at = now() WHERE id = $1", [first.id]);
    await keyRefusedWithin(a!, first.key);
    await keyRefusedWithin(b!, first.key);
    const second = await cachedKey("cache-sql-deleted");
    await prepared.sql.rows("DELETE FROM api_keys WHERE id = $1", [second.id]);
    await keyRefusedWithin(a!, second.key);
    await keyRefusedWithin(b!, second.key);
  });

  it("verifies a key in use from the database at most once per cache lifetime (last_used_at is not written per request)", async () => {
    const { key, id } = await cachedKey("cache-last-used");
    const lastUsed = async () =>
      (
        await prepared.sql.rows<{ at: string }>(
          "SELECT last_used_at::text AS at FROM api_keys WHERE id = $1",
          [id],
        )
      )[0]?.at;
    const before = await lastUsed();
    for (let i = 0; i < 10; i++) expect(await keyStatus(a!, key)).toBe(400);
    expect(await lastUsed()).toBe(before);
  });

  it("keeps other users signed in", async () => {
    const cookie = await signIn(a!.url, emailOf("viewer"));
    expect(await status(a!, cookie)).toBe(200);
    expect(await status(b!, cookie)).toBe(200);
  });
});
