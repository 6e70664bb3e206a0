import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { authedFetch, emailOf, type Who } from "../support/auth";
import { agentFor, createTicket, runOnce } from "./client";
import { type Backend, serverOn, until } from "./setup";
import { settledView } from "./thread-api";

/*
 * Teams (issue 33). Two teams own the two agents of two paused threads: "Refunds" (every role's user in it) owns the
 * refund agent, "Accounts" (nobody in it) owns the account-change agent. Generated over the route tree — every API
 * route whose path names a thread or a decision, every method it exports, and the routes that name one in their query
 * or body — for every role, in the team and out of it:
 * - out of the team, the answer is the one for a thread or decision that does not exist (404, same code): never 403,
 *   and nothing of the other team's thread changes, whatever the request;
 * - in the team, the route is not refused as unknown;
 * - an admin (the default TEAMS_SEE_ALL_ROLE) is in every team.
 * The lists — inbox, search, the live feed — and the pages leave the other team's thread out; an agent no team owns
 * (after "Accounts" is deleted) is everyone's again. Both databases.
 */

type Role = Exclude<Who, "intake">;
const ROLES: Role[] = ["viewer", "operator", "supervisor", "admin"];
const SCOPED: Role[] = ["viewer", "operator", "supervisor"];

interface View {
  status: string;
  activeRunId: string | null;
  checkpointId: string | null;
  pendingInterrupts: { interruptId: string; action: string }[];
  decisions: { interruptId: string; status: string }[];
}

/** Every API route file whose path names a thread or a decision, with the methods it exports. */
function threadRoutes(): { path: string; methods: string[] }[] {
  const root = join(process.cwd(), "app", "api");
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const full = join(dir, name);
      return statSync(full).isDirectory() ? walk(full) : name === "route.ts" ? [full] : [];
    });
  return walk(root)
    .map((file) => ({
      path: `/api/${relative(root, file).split(sep).slice(0, -1).join("/")}`,
      methods: [...readFileSync(file, "utf8").matchAll(/export const (GET|POST|PATCH|PUT|DELETE)\b/g)].map(
        (m) => m[1] as string,
      ),
    }))
    .filter((r) => r.path.includes("[threadId]") || r.path.includes("[interruptId]"));
}

/** Routes that name a thread or a decision in their query or body (the route wrapper checks those names too). */
const NAMED_ELSEWHERE = [
  { method: "GET", path: "/api/inbox/claims?threadId=[threadId]", body: undefined, roleFirst: undefined },
  // Named in the body: a role below the route's is refused (403) before the body is read, whatever it names.
  {
    method: "POST",
    path: "/api/inbox/claims",
    body: { interruptId: "[interruptId]" },
    roleFirst: "operator",
  },
] as { method: string; path: string; body: unknown; roleFirst: Role | undefined }[];

describe.each<Backend>(["postgres", "pglite"])("teams on %s", (backend) => {
  let base = "";
  let stop: () => Promise<void> = async () => {};
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    ({ base, stop } = await serverOn(backend, "teams", { EFFECT_POLL_MS: "100" }));
  }, 120_000);
  afterAll(() => stop());

  const call = (who: Who, method: string, path: string, body?: unknown) =>
    authedFetch(
      `${base}${path}`,
      {
        method,
        ...(body !== undefined || method === "POST" || method === "PATCH"
          ? { headers: { "content-type": "application/json" }, body: JSON.stringify(body ?? {}) }
          : {}),
      },
      who,
    );
  const json = async <T>(res: Response): Promise<T> => (await res.json()) as T;
  const codeOf = async (res: Response) => {
    const text = await res.text();
    try {
      return (JSON.parse(text) as { code?: string }).code ?? null;
    } catch {
      return null;
    }
  };

  test("out of the team every thread route answers as for nothing (404), in it no route does; nothing else changes", async () => {
    // Two paused threads: a refund at its approval, an account change at its two reviews.
    const refund = await createTicket(base, "Refund ORD-1002 please, it arrived broken.");
    await runOnce(agentFor(base, refund), {
      message: "Refund ORD-1002 please, it arrived broken.",
      as: "intake",
    });
    const change = "Please change my payout account to DE89 3704 0044 0532 0130 00.";
    const account = await createTicket(base, change, "ORD-1003", "account_change");
    await runOnce(agentFor(base, account), { message: change, as: "intake" });
    const [refundView, accountView] = await Promise.all([
      settledView<View>(base, refund),
      settledView<View>(base, account),
    ]);
    expect(refundView.pendingInterrupts.map((p) => p.action)).toEqual(["refund_approval"]);
    expect(accountView.pendingInterrupts.map((p) => p.action)).toEqual(["review_change", "review_change"]);

    // The admin sets the teams up.
    const users = (
      await json<{ items: { id: string; email: string }[] }>(await call("admin", "GET", "/api/admin/users"))
    ).items;
    const idOf = (role: Role) => users.find((u) => u.email === emailOf(role))?.id as string;
    const made = async (name: string) => {
      const res = await call("admin", "POST", "/api/admin/teams", { name });
      expect(res.status).toBe(201);
      return (await json<{ team: { id: string } }>(res)).team.id;
    };
    const refunds = await made("Refunds");
    const accounts = await made("Accounts");
    expect((await call("admin", "POST", "/api/admin/teams", { name: "Refunds" })).status).toBe(409);
    expect((await call("operator", "POST", "/api/admin/teams", { name: "Mine" })).status).toBe(403);
    const unknownAgent = await call("admin", "PATCH", `/api/admin/teams/${refunds}`, {
      agents: ["no_such_agent"],
    });
    expect(unknownAgent.status).toBe(422);
    expect(
      (
        await call("admin", "PATCH", `/api/admin/teams/${refunds}`, {
          members: SCOPED.map(idOf),
          agents: ["refund"],
        })
      ).status,
    ).toBe(200);
    expect(
      (await call("admin", "PATCH", `/api/admin/teams/${accounts}`, { agents: ["account_change"] })).status,
    ).toBe(200);

    const inTeam = { threadId: refund, interruptId: refundView.pendingInterrupts[0]?.interruptId as string };
    const outOfTeam = {
      threadId: account,
      interruptId: accountView.pendingInterrupts[0]?.interruptId as string,
    };
    const ghost = { threadId: crypto.randomUUID(), interruptId: crypto.randomUUID() };
    const checkpointOf: Record<string, string> = {
      [refund]: refundView.checkpointId as string,
      [account]: accountView.checkpointId as string,
      [ghost.threadId]: accountView.checkpointId as string,
    };
    const fill = (template: string, target: { threadId: string; interruptId: string }) =>
      template
        .replaceAll("[threadId]", target.threadId)
        .replaceAll("[interruptId]", target.interruptId)
        .replaceAll("[checkpointId]", checkpointOf[target.threadId] as string)
        .replaceAll("[effectId]", "00000000-0000-4000-8000-000000000000")
        .replaceAll("[runId]", "00000000-0000-4000-8000-000000000001");
    const fillBody = (body: unknown, target: { threadId: string; interruptId: string }) =>
      body === undefined ? undefined : JSON.parse(fill(JSON.stringify(body), target));

    const routes = threadRoutes();
    // The tree has the thread routes this suite is about (a renamed segment would otherwise leave it testing nothing).
    expect(routes.length).toBeGreaterThanOrEqual(12);
    const requests = [
      ...routes.flatMap((r) =>
        r.methods.map((method) => ({
          method,
          path: r.path,
          body: undefined as unknown,
          roleFirst: undefined as Role | undefined,
        })),
      ),
      ...NAMED_ELSEWHERE,
    ];
    const failures: string[] = [];
    for (const role of ROLES) {
      for (const request of requests) {
        const label = `${role} ${request.method} ${request.path}`;
        // The admin sees every team: reading the other team's thread is enough (their writes would change it).
        if (role === "admin" && request.method !== "GET") continue;
        // The other team's thread first: refused as unknown, exactly as a thread that does not exist.
        const out = await call(
          role,
          request.method,
          fill(request.path, outOfTeam),
          fillBody(request.body, outOfTeam),
        );
        const outCode = await codeOf(out);
        if (role !== "admin") {
          const none = await call(
            role,
            request.method,
            fill(request.path, ghost),
            fillBody(request.body, ghost),
          );
          const noneCode = await codeOf(none);
          // A route naming the id in its body refuses a role below its own first (the same for any id).
          const below =
            request.roleFirst !== undefined && ROLES.indexOf(role) < ROLES.indexOf(request.roleFirst);
          if (out.status !== (below ? 403 : 404))
            failures.push(`${label}: ${out.status} ${outCode} for another team's thread`);
          if (out.status !== none.status || outCode !== noneCode) {
            failures.push(
              `${label}: ${out.status} ${outCode} for another team's, ${none.status} ${noneCode} for none`,
            );
          }
        } else if (outCode === "not_found:thread" || outCode === "not_found:interrupt") {
          failures.push(`${label}: an admin is refused ${outCode}`);
        }
        // Their own team's thread is never unknown to them.
        const own = await call(
          role,
          request.method,
          fill(request.path, inTeam),
          fillBody(request.body, inTeam),
        );
        const ownCode = await codeOf(own);
        if (ownCode === "not_found:thread" || ownCode === "not_found:interrupt") {
          failures.push(`${label}: ${own.status} ${ownCode} on their own team's thread`);
        }
      }
    }
    expect(failures).toEqual([]);

    // Nothing of the other team's thread moved for those outside it (the admin's requests may have, so read the
    // ledger: only the admin's name may be on it).
    const after = await settledView<View>(base, account, 60_000, "admin");
    expect(after.checkpointId).toBe(accountView.checkpointId);
    expect(after.decisions.map((d) => d.status)).toEqual(["pending", "pending"]);

    // Bulk: another team's decision is as unknown as one that does not exist.
    const bulk = await json<{ refused: { interruptId: string; code: string }[]; done: unknown[] }>(
      await call("operator", "POST", "/api/inbox/bulk", {
        interruptIds: [outOfTeam.interruptId, ghost.interruptId],
        verb: "reject",
        note: "Not ours.",
      }),
    );
    expect(bulk.done).toEqual([]);
    expect(bulk.refused.map((r) => r.code)).toEqual(["not_found:decision", "not_found:decision"]);
    ids.refund = refund;
    ids.account = account;
    ids.accounts = accounts;
  }, 600_000);

  test("lists, search, the live feed and the pages leave the other team's thread out; a team's end gives it back", async () => {
    const refund = ids.refund as string;
    const account = ids.account as string;
    const accounts = ids.accounts as string;
    const listed = async (who: Who, query: string) =>
      (
        await json<{ items: { thread: { threadId: string } }[] }>(
          await call(who, "GET", `/api/threads?${query}`),
        )
      ).items.map((i) => i.thread.threadId);
    for (const role of SCOPED) {
      for (const query of ["status=pending", "status=all"]) {
        const seen = await listed(role, query);
        expect(seen, `${role} ${query}`).toContain(refund);
        expect(seen, `${role} ${query}`).not.toContain(account);
      }
      const hits = await json<{ hits: { threadId: string }[] }>(
        await call(role, "GET", "/api/search?q=ORD-1003"),
      );
      expect(hits.hits.map((h) => h.threadId)).not.toContain(account);
      const byId = await json<{ hits: { threadId: string }[] }>(
        await call(role, "GET", `/api/search?q=${account}`),
      );
      expect(byId.hits).toEqual([]);
      // Left out inside the search, not after it: the one hit of a page is their own thread, though the other team's
      // matches too and is newer.
      const page = await json<{ hits: { threadId: string }[] }>(
        await call(role, "GET", "/api/search?q=please&limit=1"),
      );
      expect(page.hits.map((h) => h.threadId)).toEqual([refund]);
      // The live feed from the start: the refund's changes, none of the account change's.
      const feed = await (await call(role, "GET", "/api/inbox/stream?after=0&once=1")).text();
      expect(feed).toContain(refund);
      expect(feed).not.toContain(account);
      // The pages: the other team's thread and its history are not found.
      expect((await call(role, "GET", `/threads/${account}`)).status).toBe(404);
      expect((await call(role, "GET", `/threads/${account}/history`)).status).toBe(404);
      expect((await call(role, "GET", `/threads/${refund}`)).status).toBe(200);
    }
    expect(await listed("admin", "status=all")).toEqual(expect.arrayContaining([refund, account]));
    expect((await call("admin", "GET", `/threads/${account}`)).status).toBe(200);

    // The team is deleted: its agent is no team's, and everyone sees its thread again.
    expect((await call("admin", "DELETE", `/api/admin/teams/${accounts}`)).status).toBe(200);
    await until("the account change back in the viewer's list", async () =>
      (await listed("viewer", "status=all")).includes(account),
    );
    expect((await call("viewer", "GET", `/api/threads/${account}`)).status).toBe(200);
    // Every change to the teams is in the audit trail, by the admin.
    const audit = await json<{ items: { action: string }[] }>(
      await call("admin", "GET", "/api/audit?action=team_changed"),
    );
    expect(audit.items.length).toBeGreaterThanOrEqual(5);
  }, 300_000);
});
