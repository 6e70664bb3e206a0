import fc from "fast-check";
import pg from "pg";
import { authedFetch, authHeaders, signIn, TEST_PASSWORD } from "../support/auth";
import { useTestServer } from "./setup";

/*
 * The last-admin invariant under concurrent admins, where sign-in may send you, the pages' CSP, and webhook targets
 * that reach a refused address through an IPv6 spelling of it (issue 50).
 */

describe("admin invariants, redirects after sign-in and CSP", () => {
  const ctx = useTestServer("adminpages");
  const url = ctx.url;

  it("has an icon: every page links it, and it is served to anyone (no 404 in a browser's console)", async () => {
    for (const path of ["/sign-in", "/"]) {
      const page = await authedFetch(url(path), {}, "viewer");
      expect(await page.text()).toMatch(
        /<link rel="icon" href="\/icon\.svg[^"]*"[^>]*type="image\/svg\+xml"/,
      );
    }
    const icon = await fetch(url("/icon.svg"));
    expect(icon.status).toBe(200);
    expect(icon.headers.get("content-type")).toContain("image/svg+xml");
    expect(await icon.text()).toContain("<svg");
  });

  it("follows only same-origin paths after sign-in", async () => {
    const { cookie } = (await authHeaders(ctx.server!.url, "viewer")) as { cookie: string };
    const landing = async (next: string) => {
      const res = await fetch(url(`/sign-in?next=${next}`), { headers: { cookie }, redirect: "manual" });
      await res.body?.cancel();
      const location = res.headers.get("location");
      expect([next, res.status]).toEqual([next, 307]);
      return new URL(location ?? "", ctx.server!.url);
    };
    const hostile = [
      encodeURIComponent("/\\evil.example"),
      "/%09/evil.example",
      "/%0a/evil.example",
      encodeURIComponent("//evil.example"),
      encodeURIComponent("/\\/evil.example"),
      encodeURIComponent("https://evil.example/"),
      encodeURIComponent("javascript:alert(1)"),
    ];
    for (const next of hostile) {
      const target = await landing(next);
      expect([next, target.origin, target.pathname]).toEqual([next, ctx.server!.url, "/"]);
    }
    const kept = await landing(encodeURIComponent("/threads/abc/history?view=tree#x"));
    expect(kept.href).toBe(url("/threads/abc/history?view=tree#x"));
  });

  it("answers a page address whose percent-encoding does not decode with a 400 page, never a 500", async () => {
    const headers = await authHeaders(ctx.server!.url, "viewer");
    // Invalid escapes (a lone %, non-hex, a lone continuation or lead byte, overlong, an encoded surrogate), inside
    // whatever surrounds them, on every page route.
    const bad = fc
      .tuple(
        fc.stringMatching(/^[a-z0-9-]{0,12}$/),
        fc.constantFrom(
          "%",
          "%z",
          "%zz",
          "%G0",
          "%80",
          "%FF",
          "%C0%AF",
          "%E0%A4%A",
          "%ED%A0%80",
          "%F4%90%80%80",
        ),
        fc.stringMatching(/^[a-z0-9-]{0,12}$/),
      )
      .map(([a, broken, b]) => `${a}${broken}${b}`)
      // What follows may complete an escape ("%E0%A4%A" + "0" is ठ): only segments that do not decode.
      .filter((segment) => {
        try {
          decodeURIComponent(segment);
          return false;
        } catch {
          return true;
        }
      });
    const route = fc.constantFrom(
      (x: string) => `/threads/${x}`,
      (x: string) => `/threads/${x}/history`,
      (x: string) => `/${x}`,
      (x: string) => `/admin/${x}`,
    );
    await fc.assert(
      fc.asyncProperty(route, bad, async (at, segment) => {
        const path = at(segment);
        const res = await fetch(url(path), { headers, redirect: "manual" });
        const body = await res.text();
        expect([path, res.status]).toEqual([path, 400]);
        expect(body).toContain("This address is not valid");
      }),
      { numRuns: 40 },
    );
    // A well-formed address of no thread is not refused here.
    const fine = await fetch(url(`/threads/${encodeURIComponent("no such thread")}`), {
      headers,
      redirect: "manual",
    });
    await fine.body?.cancel();
    expect([400, 500]).not.toContain(fine.status);
  });

  it("sends a per-request nonce CSP without 'unsafe-inline' scripts, and the pages' scripts carry it", async () => {
    const headers = await authHeaders(ctx.server!.url, "viewer");
    const nonces: string[] = [];
    for (const [path, init] of [
      ["/sign-in", {}],
      ["/", { headers }],
    ] as const) {
      const res = await fetch(url(path), { ...init, redirect: "manual" });
      expect([path, res.status]).toEqual([path, 200]);
      const csp = res.headers.get("content-security-policy") ?? "";
      const scriptSrc = csp.split(";").find((d) => d.trim().startsWith("script-src")) ?? "";
      expect(scriptSrc).not.toContain("'unsafe-inline'");
      const nonce = scriptSrc.match(/'nonce-([A-Za-z0-9+/=_-]+)'/)?.[1];
      expect([path, nonce]).toEqual([path, expect.any(String)]);
      const html = await res.text();
      const scripts = html.match(/<script\b[^>]*>/g) ?? [];
      expect(scripts.length).toBeGreaterThan(0);
      for (const tag of scripts)
        expect([path, tag]).toEqual([path, expect.stringContaining(`nonce="${nonce}"`)]);
      nonces.push(nonce!);
    }
    expect(new Set(nonces).size).toBe(nonces.length);
  });

  it("refuses a webhook target written as IPv6 carrying a refused IPv4 address (422 unprocessable:webhook_target)", async () => {
    const add = (target: string) =>
      authedFetch(
        url("/api/admin/notifications"),
        {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ op: "add", kind: "webhook", target, events: ["escalated"] }),
        },
        "admin",
      );
    const written = async () => ({
      targets: await ctx.prepared.sql.count("notification_targets"),
      audit: await ctx.prepared.sql.count("audit_log", "action = 'queue_settings'"),
    });
    const before = await written();
    // The IPv4-compatible loopback (the URL parser writes it `[::7f00:1]`), and generated others: a refused IPv4
    // address (loopback, private, link-local, unspecified) mapped, translated, compatible, NAT64 or 6to4.
    const refused = fc
      .tuple(
        fc.constantFrom([127], [10], [169, 254], [192, 168], [0], [172, 16]),
        fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 4, maxLength: 4 }),
        fc.constantFrom("::ffff:", "::ffff:0:", "::", "64:ff9b::", "2002"),
        fc.integer({ min: 1, max: 65_535 }),
      )
      .map(([network, random, form, port]) => {
        const [a, b, c, d] = [...network, ...random].slice(0, 4) as [number, number, number, number];
        const hex = (x: number, y: number) => ((x << 8) | y).toString(16);
        const host = form === "2002" ? `2002:${hex(a, b)}:${hex(c, d)}::1` : `${form}${a}.${b}.${c}.${d}`;
        return `http://[${host}]:${port}/hook`;
      });
    for (const target of ["http://[::127.0.0.1]:8080/", ...fc.sample(refused, { seed: 50, numRuns: 20 })]) {
      const res = await add(target);
      const body = (await res.json()) as { code?: string };
      expect([target, res.status, body.code]).toEqual([target, 422, "unprocessable:webhook_target"]);
    }
    expect(await written()).toEqual(before);
    // A public address, mapped, is a target like any other (the refusals above are the address's, not the form's).
    const publicOne = await add("http://[::ffff:8.8.8.8]:8080/hook");
    expect(publicOne.status).toBe(200);
    const { target } = (await publicOne.json()) as { target: { id: string } };
    const removed = await authedFetch(
      url("/api/admin/notifications"),
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ op: "remove", id: target.id }),
      },
      "admin",
    );
    expect(removed.status).toBe(200);
  });

  async function createAdmin(cookie: string, email: string) {
    const res = await fetch(url("/api/admin/users"), {
      method: "POST",
      headers: { "content-type": "application/json", cookie },
      body: JSON.stringify({ email, name: email, password: TEST_PASSWORD, role: "admin" }),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { id: string }).id;
  }

  function change(cookie: string, userId: string, body: unknown) {
    return fetch(url(`/api/admin/users/${userId}`), {
      method: "PATCH",
      headers: { "content-type": "application/json", cookie },
      body: JSON.stringify(body),
    }).then(async (res) => `${res.status} ${((await res.json()) as { code?: string }).code ?? "ok"}`);
  }

  const enabledAdmins = () =>
    ctx.prepared.sql.rows<{ id: string; email: string }>(
      "SELECT id, email FROM auth_users WHERE role = 'admin' AND NOT disabled ORDER BY email",
    );

  it("lets only one of two admins demoting each other at once win (409 conflict:last_admin)", async () => {
    const { cookie: root } = (await authHeaders(ctx.server!.url, "admin")) as { cookie: string };
    const otherId = await createAdmin(root, "rival@test.local");
    const other = await signIn(ctx.server!.url, "rival@test.local");
    const [rootRow] = await ctx.prepared.sql.rows<{ id: string }>(
      "SELECT id FROM auth_users WHERE email = $1",
      ["admin@test.local"],
    );
    // Hold the admin-changes lock so both requests are past authentication and waiting on it when it is released.
    const holder = new pg.Client({ connectionString: ctx.prepared.url });
    await holder.connect();
    let results: string[];
    try {
      await holder.query("SELECT pg_advisory_lock(7311842002)");
      const pending = Promise.all([
        change(root, otherId, { role: "operator" }),
        change(other, rootRow!.id, { role: "viewer" }),
      ]);
      await new Promise((r) => setTimeout(r, 500));
      await holder.query("SELECT pg_advisory_unlock(7311842002)");
      results = await pending;
    } finally {
      await holder.end();
    }
    console.log(`[last admin] two admins at once: ${JSON.stringify(results)}`);
    expect(results.sort()).toEqual(["200 ok", "409 conflict:last_admin"]);
    expect(await enabledAdmins()).toHaveLength(1);
  });

  it("never leaves zero enabled admins, whatever admins do to each other at once", async () => {
    const [survivor] = await enabledAdmins();
    const first = await signIn(ctx.server!.url, survivor!.email);
    const emails = [survivor!.email, ...[1, 2, 3, 4].map((i) => `admin${i}@test.local`)];
    const ids = [survivor!.id];
    for (const email of emails.slice(1)) ids.push(await createAdmin(first, email));
    const cookies = [first, ...(await Promise.all(emails.slice(1).map((e) => signIn(ctx.server!.url, e))))];
    // A fixed, reproducible schedule of 50 changes: admin i demotes or disables admin j (never itself).
    let seed = 7;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, k) => {
        const by = next(emails.length);
        const target = (by + 1 + next(emails.length - 1)) % emails.length;
        return change(cookies[by]!, ids[target]!, k % 2 === 0 ? { role: "operator" } : { disabled: true });
      }),
    );
    const tally: Record<string, number> = {};
    for (const r of results) tally[r] = (tally[r] ?? 0) + 1;
    const remaining = (await enabledAdmins()).length;
    console.log(
      `[last admin] 50 concurrent changes: ${JSON.stringify(tally)}; enabled admins left: ${remaining}`,
    );
    expect(remaining).toBeGreaterThanOrEqual(1);
    const allowed = /^(200 ok|401 unauthorized:session|403 forbidden:role|409 conflict:last_admin)$/;
    expect(results.filter((r) => !allowed.test(r))).toEqual([]);
    // The database itself refuses, whoever asks.
    await expect(ctx.prepared.sql.rows("UPDATE auth_users SET role = 'viewer'")).rejects.toThrow(
      /last enabled admin/,
    );
    await expect(ctx.prepared.sql.rows("UPDATE auth_users SET disabled = true")).rejects.toThrow(
      /last enabled admin/,
    );
    await expect(ctx.prepared.sql.rows("DELETE FROM auth_users WHERE role = 'admin'")).rejects.toThrow(
      /last enabled admin/,
    );
    expect(await enabledAdmins()).toHaveLength(remaining);
  });
});
