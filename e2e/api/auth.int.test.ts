import { authedFetch, authHeaders, emailOf, signIn, TEST_PASSWORD, type Who } from "../support/auth";
import type { TestServer } from "../support/server";
import { agentFor, createTicket, postRun, runBody, runOnce } from "./client";
import { cleanUp, prepareDatabase, startTestServer } from "./setup";

/** Refunds above 400.00 need a supervisor here; the extra orders are 500.00 televisions. */
const FOUR_EYES_MIN_CENTS = 40_000;

describe("sign-in, roles, four-eyes, intake keys and the audit trail", () => {
  let prepared: Awaited<ReturnType<typeof prepareDatabase>>;
  let server: TestServer | undefined;
  let paused: { threadId: string; interruptId: string; checkpointId: string };

  const url = (path: string) => `${server!.url}${path}`;

  async function pause(order: string, as: Who = "intake") {
    const message = `Refund ${order} please, it broke.`;
    const threadId =
      as === "intake"
        ? await createTicket(server!.url, message)
        : ((await (await post("/api/threads", { message }, as)).json()) as { threadId: string }).threadId;
    const run = await runOnce(agentFor(server!.url, threadId), { message, as });
    const interrupt = run.interrupts[0]!;
    const [row] = await prepared.sql.rows<{ checkpoint_id: string }>(
      "SELECT checkpoint_id FROM decisions WHERE interrupt_id = $1",
      [interrupt.id],
    );
    return { threadId, interruptId: interrupt.id, checkpointId: row!.checkpoint_id };
  }

  function post(path: string, body: unknown, who?: Who, extra: Record<string, string> = {}) {
    const init = {
      method: "POST",
      headers: { "content-type": "application/json", ...extra },
      body: JSON.stringify(body),
    };
    return who ? authedFetch(url(path), init, who) : fetch(url(path), init);
  }

  const approve = (interruptId: string) => ({
    interruptId,
    status: "resolved",
    payload: { decision: "approve" },
  });

  /** Everything a refused request must leave alone. */
  async function snapshot() {
    const [row] = await prepared.sql.rows(
      `SELECT (SELECT count(*) FROM threads)::int AS threads, (SELECT count(*) FROM runs)::int AS runs,
        (SELECT count(*) FROM events)::int AS events, (SELECT count(*) FROM refunds)::int AS refunds,
        (SELECT count(*) FROM outbox)::int AS outbox, (SELECT count(*) FROM checkpoint.checkpoints)::int AS checkpoints,
        (SELECT string_agg(interrupt_id || ':' || status, ',' ORDER BY interrupt_id) FROM decisions) AS decisions,
        (SELECT string_agg(email || ':' || role || ':' || disabled, ',' ORDER BY email) FROM auth_users) AS users,
        (SELECT string_agg(id || ':' || (revoked_at IS NULL), ',' ORDER BY id) FROM api_keys) AS keys,
        (SELECT count(*) FROM audit_log)::int AS audit`,
    );
    return row;
  }

  beforeAll(async () => {
    prepared = await prepareDatabase("auth", { prefix: "ORD-9", count: 10 });
    server = await startTestServer({
      databaseUrl: prepared.url,
      env: { FOUR_EYES_MIN_CENTS: String(FOUR_EYES_MIN_CENTS) },
    });
    paused = await pause("ORD-9000");
  });
  afterAll(async () => {
    await cleanUp([server], prepared);
  });

  it("keeps every route shut without a session and below the role it needs, writing nothing", async () => {
    const [viewer] = await prepared.sql.rows<{ id: string }>("SELECT id FROM auth_users WHERE email = $1", [
      emailOf("viewer"),
    ]);
    const [key] = await prepared.sql.rows<{ id: string }>("SELECT id FROM api_keys LIMIT 1");
    const { threadId, interruptId, checkpointId } = paused;
    const reads: [string, Who][] = [
      ["/api/threads", "viewer"],
      [`/api/threads/${threadId}`, "viewer"],
      [`/api/threads/${threadId}/history`, "viewer"],
      [`/api/threads/${threadId}/events?after=0`, "viewer"],
      [`/api/threads/${threadId}/checkpoints/${checkpointId}`, "viewer"],
      [`/api/threads/${threadId}/checkpoints/${checkpointId}/side-effects`, "viewer"],
      ["/api/audit", "viewer"],
      ["/api/admin/users", "admin"],
      ["/api/admin/keys", "admin"],
      ["/api/admin/teams", "admin"],
    ];
    const writes: [string, string, unknown, Who][] = [
      ["POST", "/api/threads", { message: "Refund ORD-1002 please" }, "operator"],
      ["POST", `/api/threads/${threadId}/runs`, runBody(threadId, [approve(interruptId)]), "operator"],
      ["POST", `/api/threads/${threadId}/fork`, { checkpointId }, "supervisor"],
      ["POST", "/api/retention/prune", { keepLatest: 1, olderThanSeconds: 0 }, "supervisor"],
      ["POST", "/api/retention/apply", { dryRun: true }, "admin"],
      ["POST", "/api/admin/erasure", { email: "nobody@erasure.invalid" }, "admin"],
      [
        "POST",
        "/api/admin/users",
        { email: "new@test.local", name: "New", password: TEST_PASSWORD, role: "operator" },
        "admin",
      ],
      ["PATCH", `/api/admin/users/${viewer!.id}`, { role: "operator" }, "admin"],
      ["POST", "/api/admin/keys", { name: "another" }, "admin"],
      ["POST", "/api/admin/teams", { name: "Desk" }, "admin"],
      ["POST", `/api/admin/keys/${key!.id}/revoke`, {}, "admin"],
    ];
    const below = (needed: Who): Who[] => {
      const order: Who[] = ["viewer", "operator", "supervisor", "admin"];
      return order.slice(0, order.indexOf(needed));
    };
    const before = await snapshot();
    for (const [path, needed] of reads) {
      const anonymous = await fetch(url(path));
      expect([path, anonymous.status, (await anonymous.json()).code]).toEqual([
        path,
        401,
        "unauthorized:session",
      ]);
      for (const who of below(needed)) {
        const res = await authedFetch(url(path), {}, who);
        expect([path, who, res.status, (await res.json()).code]).toEqual([path, who, 403, "forbidden:role"]);
      }
      const allowed = await authedFetch(url(path), {}, needed);
      expect([path, allowed.status]).toEqual([path, 200]);
      await allowed.body?.cancel();
    }
    for (const [method, path, body, needed] of writes) {
      const init = { method, headers: { "content-type": "application/json" }, body: JSON.stringify(body) };
      const anonymous = await fetch(url(path), init);
      expect([path, anonymous.status, (await anonymous.json()).code]).toEqual([
        path,
        401,
        "unauthorized:session",
      ]);
      for (const who of below(needed)) {
        const res = await authedFetch(url(path), init, who);
        expect([path, who, res.status, (await res.json()).code]).toEqual([path, who, 403, "forbidden:role"]);
      }
      // An intake key is for tickets only: everything else is outside its scope.
      if (!path.startsWith("/api/threads") || path.includes("/fork")) {
        const res = await authedFetch(url(path), init, "intake");
        expect([path, res.status, (await res.json()).code]).toEqual([path, 403, "forbidden:api_key_scope"]);
      }
    }
    expect(await snapshot()).toEqual(before);
    // The health check stays open (load balancers have no session).
    expect((await fetch(url("/api/health"))).status).toBe(200);
  });

  it("lets an operator decide small refunds but not large ones; a supervisor approves, and the ledger says who", async () => {
    const large = await pause("ORD-9001");
    const before = await snapshot();
    const refused = await postRun(
      server!.url,
      large.threadId,
      runBody(large.threadId, [approve(large.interruptId)]),
      "operator",
    );
    expect(refused.status).toBe(403);
    expect(refused.json?.code).toBe("forbidden:four_eyes_supervisor");
    expect(await snapshot()).toEqual(before);
    // Rejecting moves no money: an operator may.
    const small = await pause("ORD-1002");
    const rejected = await postRun(
      server!.url,
      small.threadId,
      runBody(small.threadId, [
        {
          interruptId: small.interruptId,
          status: "resolved",
          payload: { decision: "reject", note: "Outside policy" },
        },
      ]),
      "operator",
    );
    expect(rejected.status).toBe(200);

    const approved = await postRun(
      server!.url,
      large.threadId,
      runBody(large.threadId, [approve(large.interruptId)]),
      "supervisor",
    );
    expect(approved.status).toBe(200);
    const [ledger] = await prepared.sql.rows(
      "SELECT status, resolved_by, resolver_role FROM decisions WHERE interrupt_id = $1",
      [large.interruptId],
    );
    expect(ledger).toEqual({
      status: "resolved",
      resolved_by: emailOf("supervisor"),
      resolver_role: "supervisor",
    });
    expect(await prepared.sql.count("refunds", "order_id = 'ORD-9001'")).toBe(1);
    const audit = await (
      await authedFetch(url(`/api/audit?action=decision&threadId=${large.threadId}`), {}, "viewer")
    ).json();
    expect(audit.items).toHaveLength(1);
    expect(audit.items[0]).toMatchObject({
      actor: emailOf("supervisor"),
      actorRole: "supervisor",
      interruptId: large.interruptId,
      answer: { decision: "approve" },
      payload: { action: "refund_approval", order: { id: "ORD-9001" } },
    });
  });

  it("refuses the approval to whoever started the thread, and lets someone else approve it", async () => {
    const own = await pause("ORD-9002", "supervisor");
    const before = await snapshot();
    const refused = await postRun(
      server!.url,
      own.threadId,
      runBody(own.threadId, [approve(own.interruptId)]),
      "supervisor",
    );
    expect(refused.status).toBe(403);
    expect(refused.json?.code).toBe("forbidden:four_eyes_own_thread");
    expect(await snapshot()).toEqual(before);
    const [admin] = await prepared.sql.rows<{ email: string }>(
      "SELECT email FROM auth_users WHERE role = 'admin'",
    );
    const other = await postRun(
      server!.url,
      own.threadId,
      runBody(own.threadId, [approve(own.interruptId)]),
      "admin",
    );
    expect(other.status).toBe(200);
    const [ledger] = await prepared.sql.rows("SELECT resolved_by FROM decisions WHERE interrupt_id = $1", [
      own.interruptId,
    ]);
    expect(ledger).toEqual({ resolved_by: admin!.email });
  });

  it("takes tickets from an intake key, never decisions; a revoked key is refused", async () => {
    const adminCookie = await authHeaders(server!.url, "admin");
    const issued = await post("/api/admin/keys", { name: "shop" }, "admin");
    expect(issued.status).toBe(201);
    const { key, apiKey } = (await issued.json()) as { key: string; apiKey: { id: string } };
    const [stored] = await prepared.sql.rows<Record<string, unknown>>(
      "SELECT * FROM api_keys WHERE id = $1",
      [apiKey.id],
    );
    expect(JSON.stringify(stored)).not.toContain(key.slice(12));
    const bearer = { authorization: `Bearer ${key}` };

    const message = "Refund ORD-9003 please, it broke.";
    const created = await post("/api/threads", { message }, undefined, bearer);
    expect(created.status).toBe(201);
    const { threadId } = (await created.json()) as { threadId: string };
    const started = await post(
      `/api/threads/${threadId}/runs`,
      runBody(threadId, undefined, message),
      undefined,
      bearer,
    );
    expect(started.status).toBe(200);
    expect(await started.text()).toContain('"type":"RUN_FINISHED"');
    const [decision] = await prepared.sql.rows<{ interrupt_id: string }>(
      "SELECT interrupt_id FROM decisions WHERE thread_id = $1 AND status = 'pending'",
      [threadId],
    );
    const before = await snapshot();
    const decide = await post(
      `/api/threads/${threadId}/runs`,
      runBody(threadId, [approve(decision!.interrupt_id)]),
      undefined,
      bearer,
    );
    expect(decide.status).toBe(403);
    expect((await decide.json()).code).toBe("forbidden:api_key_scope");
    const again = await post(
      `/api/threads/${threadId}/runs`,
      runBody(threadId, undefined, "more"),
      undefined,
      bearer,
    );
    expect(again.status).toBe(403);
    expect(await snapshot()).toEqual(before);

    const revoked = await fetch(url(`/api/admin/keys/${apiKey.id}/revoke`), {
      method: "POST",
      headers: adminCookie,
    });
    expect(revoked.status).toBe(200);
    const refused = await post("/api/threads", { message }, undefined, bearer);
    expect(refused.status).toBe(401);
    expect((await refused.json()).code).toBe("unauthorized:api_key");
    const unknown = await post("/api/threads", { message }, undefined, { authorization: "Bearer hitl_nope" });
    expect(unknown.status).toBe(401);
  });

  it("refuses a cross-site POST even with a valid session cookie", async () => {
    const before = await snapshot();
    const res = await post("/api/threads", { message: "Refund ORD-1002" }, "supervisor", {
      origin: "https://evil.example",
    });
    expect(res.status).toBe(403);
    expect((await res.json()).code).toBe("forbidden:cross_site");
    const run = await post(
      `/api/threads/${paused.threadId}/runs`,
      runBody(paused.threadId, [approve(paused.interruptId)]),
      "supervisor",
      { "sec-fetch-site": "cross-site" },
    );
    expect(run.status).toBe(403);
    // Signing in from another site's page is refused too (login CSRF), and so is signing out someone.
    const signInElsewhere = await fetch(url("/api/auth/sign-in/email"), {
      method: "POST",
      headers: { "content-type": "application/json", origin: "https://evil.example" },
      body: JSON.stringify({ email: emailOf("operator"), password: TEST_PASSWORD }),
    });
    expect(signInElsewhere.status).toBe(403);
    expect(signInElsewhere.headers.getSetCookie()).toEqual([]);
    expect(await snapshot()).toEqual(before);
  });

  it("ends access at sign-out and for a disabled user, and audits sign-in and sign-out", async () => {
    const cookie = await signIn(server!.url, emailOf("operator"));
    expect((await fetch(url("/api/threads"), { headers: { cookie } })).status).toBe(200);
    const out = await fetch(url("/api/auth/sign-out"), {
      method: "POST",
      headers: { cookie, "content-type": "application/json", origin: server!.url },
      body: "{}",
    });
    expect(out.status).toBe(200);
    expect((await fetch(url("/api/threads"), { headers: { cookie } })).status).toBe(401);
    const trail = await (
      await authedFetch(url(`/api/audit?actor=${emailOf("operator")}`), {}, "viewer")
    ).json();
    const actions = trail.items.map((e: { action: string }) => e.action);
    expect(actions).toContain("sign_in");
    expect(actions).toContain("sign_out");

    const created = await post(
      "/api/admin/users",
      { email: "temp@test.local", name: "Temp", password: TEST_PASSWORD, role: "operator" },
      "admin",
    );
    expect(created.status).toBe(201);
    const temp = (await created.json()) as { id: string };
    const tempCookie = await signIn(server!.url, "temp@test.local");
    const disable = await authedFetch(
      url(`/api/admin/users/${temp.id}`),
      {
        method: "PATCH",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ disabled: true }),
      },
      "admin",
    );
    expect(disable.status).toBe(200);
    expect((await fetch(url("/api/threads"), { headers: { cookie: tempCookie } })).status).toBe(401);
    await expect(signIn(server!.url, "temp@test.local")).rejects.toThrow(/sign-in/);
  });

  it("keeps the audit trail append-only, even for SQL", async () => {
    await expect(prepared.sql.rows("UPDATE audit_log SET actor = 'someone else'")).rejects.toThrow(
      /append-only/,
    );
    await expect(prepared.sql.rows("DELETE FROM audit_log")).rejects.toThrow(/append-only/);
    await expect(prepared.sql.rows("TRUNCATE audit_log")).rejects.toThrow(/append-only/);
  });

  it("rate-limits sign-in attempts per client (429 after the limit)", async () => {
    // Every request here comes from 127.0.0.1: start from an empty count (the limiter's rows live in the database).
    await prepared.sql.rows("DELETE FROM auth_rate_limits");
    const limited = await startTestServer({
      databaseUrl: prepared.url,
      env: { SIGN_IN_RATE_LIMIT: "3" },
    });
    try {
      const attempt = () =>
        fetch(`${limited.url}/api/auth/sign-in/email`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            origin: limited.url,
            "x-forwarded-for": "203.0.113.7",
          },
          body: JSON.stringify({ email: emailOf("operator"), password: "wrong password!" }),
        });
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await attempt()).status);
      expect(statuses).toEqual([401, 401, 401, 429]);
    } finally {
      await limited.stop();
    }
  });
});
