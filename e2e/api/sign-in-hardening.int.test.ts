import { authedFetch, authHeaders, emailOf, signIn, TEST_PASSWORD } from "../support/auth";
import type { TestServer } from "../support/server";
import { cleanUp, prepareDatabase, startTestServer } from "./setup";

/*
 * Sign-in under hostile input: forged client addresses, password guessing across addresses, floods of sign-ins,
 * account probing, and what the responses and the audit trail give away.
 */

const ACCOUNT_LIMIT = 5;

describe("sign-in hardening", () => {
  let prepared: Awaited<ReturnType<typeof prepareDatabase>>;
  let server: TestServer | undefined;
  const url = (path: string, base = server!.url) => `${base}${path}`;

  function attempt(
    email: string,
    password: string,
    extra: Record<string, string> = {},
    base = server!.url,
  ): Promise<Response> {
    return fetch(url("/api/auth/sign-in/email", base), {
      method: "POST",
      headers: { "content-type": "application/json", origin: base, ...extra },
      body: JSON.stringify({ email, password }),
    });
  }

  async function createUser(email: string, role = "operator"): Promise<string> {
    const res = await authedFetch(
      url("/api/admin/users"),
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email, name: email, password: TEST_PASSWORD, role }),
      },
      "admin",
    );
    expect(res.status).toBe(201);
    return ((await res.json()) as { id: string }).id;
  }

  /** A server of its own for a limit test, with the shared rate-limit rows cleared first. */
  async function limitedServer(env: Record<string, string>): Promise<TestServer> {
    await prepared.sql.rows("DELETE FROM auth_rate_limits");
    return startTestServer({ databaseUrl: prepared.url, env });
  }

  beforeAll(async () => {
    prepared = await prepareDatabase("signin");
    server = await startTestServer({
      databaseUrl: prepared.url,
      env: { SIGN_IN_ACCOUNT_LIMIT: String(ACCOUNT_LIMIT) },
    });
  });
  afterAll(async () => {
    await cleanUp([server], prepared);
  });

  it("limits sign-in per socket address whatever X-Forwarded-For claims", async () => {
    const limited = await limitedServer({ SIGN_IN_RATE_LIMIT: "3" });
    try {
      const statuses = [];
      for (let i = 0; i < 4; i++) {
        const res = await attempt(
          `forged-${i}@test.local`,
          "wrong password!",
          {
            "x-forwarded-for": `203.0.113.${i + 1}`,
          },
          limited.url,
        );
        statuses.push(res.status);
      }
      expect(statuses).toEqual([401, 401, 401, 429]);
    } finally {
      await limited.stop();
    }
  });

  it("counts only failures per address: six good sign-ins pass a limit of three, and failures are still limited", async () => {
    const limited = await limitedServer({ SIGN_IN_RATE_LIMIT: "3" });
    try {
      const good = [];
      for (let i = 0; i < 6; i++)
        good.push((await attempt(emailOf("operator"), TEST_PASSWORD, {}, limited.url)).status);
      expect(good).toEqual([200, 200, 200, 200, 200, 200]);
      const bad = [];
      for (let i = 0; i < 4; i++)
        bad.push((await attempt(`nobody-${i}@test.local`, "wrong password!", {}, limited.url)).status);
      expect(bad).toEqual([401, 401, 401, 429]);
    } finally {
      await limited.stop();
    }
  });

  it("believes X-Forwarded-For hops only through TRUSTED_PROXIES, walking from the right", async () => {
    const proxied = await limitedServer({
      SIGN_IN_RATE_LIMIT: "3",
      TRUSTED_PROXIES: "127.0.0.1, 10.0.0.0/8",
    });
    try {
      const statuses = [];
      for (let i = 0; i < 4; i++) {
        const res = await attempt(
          `proxied-${i}@test.local`,
          "wrong password!",
          {
            // A forged leftmost entry, the real client, then a trusted internal hop.
            "x-forwarded-for": `192.0.2.${i + 1}, 198.51.100.${i + 1}, 10.1.2.3`,
          },
          proxied.url,
        );
        statuses.push(res.status);
      }
      expect(statuses).toEqual([401, 401, 401, 401]);
      const rows = await prepared.sql.rows<{ ip_address: string }>(
        "SELECT ip_address FROM audit_log WHERE action = 'sign_in_failed' AND actor LIKE 'proxied-%' ORDER BY id",
      );
      expect(rows.map((r) => r.ip_address)).toEqual([1, 2, 3, 4].map((i) => `198.51.100.${i}`));
    } finally {
      await proxied.stop();
    }
  });

  it("limits failures per account across addresses (429 rate_limited:sign_in with Retry-After)", async () => {
    await createUser("target@test.local");
    for (let i = 0; i < ACCOUNT_LIMIT; i++) {
      const res = await attempt("target@test.local", `wrong password ${i}`, {
        "x-forwarded-for": `203.0.113.${100 + i}`,
      });
      expect(res.status).toBe(401);
    }
    const limited = await attempt("target@test.local", "wrong password again", {
      "x-forwarded-for": "203.0.113.200",
    });
    expect(limited.status).toBe(429);
    expect((await limited.json()).code).toBe("rate_limited:sign_in");
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(15 * 60);
    // Even the right password waits now; other accounts from the same address do not.
    expect((await attempt("target@test.local", TEST_PASSWORD)).status).toBe(429);
    expect((await attempt(emailOf("viewer"), TEST_PASSWORD)).status).toBe(200);
  });

  it("keeps /api/health answering while a flood of sign-ins hashes passwords", async () => {
    const base = server!.url;
    let flooding = true;
    const latencies: number[] = [];
    const probe = (async () => {
      while (flooding) {
        const started = performance.now();
        const res = await fetch(url("/api/health", base));
        await res.body?.cancel();
        latencies.push(performance.now() - started);
        await new Promise((r) => setTimeout(r, 25));
      }
    })();
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        attempt(`flood-${i}@test.local`, "wrong password!").then(async (r) => {
          await r.body?.cancel();
          return { status: r.status, retryAfter: r.headers.get("retry-after") };
        }),
      ),
    );
    const floodMs = performance.now() - started;
    flooding = false;
    await probe;
    const worst = Math.max(...latencies);
    const tally: Record<number, number> = {};
    for (const { status } of answers) tally[status] = (tally[status] ?? 0) + 1;
    console.log(
      `[sign-in flood] 40 concurrent sign-ins in ${Math.round(floodMs)} ms, statuses ${JSON.stringify(tally)}; ` +
        `/api/health worst ${Math.round(worst)} ms over ${latencies.length} probes`,
    );
    expect(answers.every((a) => a.status === 401 || a.status === 429)).toBe(true);
    // Beyond the hashing slots and their short queue, sign-ins are turned away at once, with a hint when to retry.
    const busy = answers.filter((a) => a.status === 429);
    expect(busy.length).toBeGreaterThan(0);
    expect(busy.every((a) => Number(a.retryAfter) >= 1)).toBe(true);
    expect(worst).toBeLessThan(1500);
  });

  it("answers a disabled account, a wrong password and an unknown email identically", async () => {
    const id = await createUser("disabled@test.local");
    const disable = await authedFetch(
      url(`/api/admin/users/${id}`),
      { method: "PATCH", headers: { "content-type": "application/json" }, body: '{"disabled":true}' },
      "admin",
    );
    expect(disable.status).toBe(200);
    const answer = async (email: string, password: string) => {
      const res = await attempt(email, password);
      return { status: res.status, body: await res.text(), cookies: res.headers.getSetCookie() };
    };
    const disabledRight = await answer("disabled@test.local", TEST_PASSWORD);
    const disabledWrong = await answer("disabled@test.local", "wrong password!");
    const unknown = await answer("nobody-at-all@test.local", TEST_PASSWORD);
    const wrong = await answer(emailOf("operator"), "wrong password!");
    expect(disabledRight.status).toBe(401);
    expect(disabledRight.cookies).toEqual([]);
    expect([disabledWrong, unknown, wrong]).toEqual([disabledRight, disabledRight, disabledRight]);
  });

  it("audits failed sign-ins with the socket address and the email tried, never the password", async () => {
    const password = "a-guessed-password-123";
    const res = await attempt("probe@test.local", password, { "x-forwarded-for": "198.51.100.77" });
    expect(res.status).toBe(401);
    const rows = await prepared.sql.rows<Record<string, unknown>>(
      "SELECT * FROM audit_log WHERE action = 'sign_in_failed' AND actor = 'probe@test.local'",
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ ip_address: "127.0.0.1", detail: { email: "probe@test.local" } });
    expect(JSON.stringify(rows)).not.toContain(password);

    const ok = await attempt(emailOf("supervisor"), TEST_PASSWORD, { "x-forwarded-for": "198.51.100.78" });
    expect(ok.status).toBe(200);
    const [signedIn] = await prepared.sql.rows<{ ip_address: string }>(
      "SELECT ip_address FROM audit_log WHERE action = 'sign_in' AND actor = $1 ORDER BY id DESC LIMIT 1",
      [emailOf("supervisor")],
    );
    expect(signedIn?.ip_address).toBe("127.0.0.1");
  });

  it("never puts the session token in a JSON body", async () => {
    const headers = await authHeaders(server!.url, "viewer");
    const session = await fetch(url("/api/auth/get-session"), { headers });
    expect(session.status).toBe(200);
    const body = (await session.json()) as { session: Record<string, unknown>; user: unknown };
    expect(body.user).toBeTruthy();
    expect(body.session).toBeTruthy();
    expect("token" in body.session).toBe(false);
    const list = await fetch(url("/api/auth/list-sessions"), { headers });
    expect(list.status).toBe(200);
    const sessions = (await list.json()) as Record<string, unknown>[];
    expect(sessions.length).toBeGreaterThan(0);
    expect(sessions.every((s) => !("token" in s))).toBe(true);
    const signedIn = await attempt(emailOf("viewer"), TEST_PASSWORD);
    expect(signedIn.status).toBe(200);
    expect("token" in ((await signedIn.json()) as object)).toBe(false);
  });

  it("reads the sign-in body within limits: 415 for non-JSON, 413 for an oversized body", async () => {
    const plain = await fetch(url("/api/auth/sign-in/email"), {
      method: "POST",
      headers: { "content-type": "text/plain", origin: server!.url },
      body: JSON.stringify({ email: emailOf("viewer"), password: TEST_PASSWORD }),
    });
    expect([plain.status, (await plain.json()).code]).toEqual([415, "unsupported_media_type:body"]);
    const huge = await fetch(url("/api/auth/sign-in/email"), {
      method: "POST",
      headers: { "content-type": "application/json", origin: server!.url },
      body: JSON.stringify({ email: emailOf("viewer"), password: "x".repeat(200_000) }),
    });
    expect([huge.status, (await huge.json()).code]).toEqual([413, "payload_too_large:body"]);
    // Still signs in normally afterwards.
    expect(await signIn(server!.url, emailOf("viewer"))).toContain("session_token");
  });
});
