import { expect } from "vitest";
import { runBody } from "../api/client";
import { authedFetch, signIn, TEST_PASSWORD } from "./auth";

/*
 * Principals and the routes that take an answer, for the policy suites (the hand-written matrix of the shipped agents,
 * e2e/api/policy-matrix.int.test.ts, and the suite generated over agent packages, e2e/agents/policy.int.test.ts): the
 * people with a part in a thread's story and those with none, signed in on one test server; the AG-UI resume, the
 * decision route, bulk and an SLA expiry answer; and the row counts that show a refusal wrote nothing.
 */

export type Role = "viewer" | "operator" | "supervisor" | "admin";
export const RANK: Record<Role, number> = { viewer: 0, operator: 1, supervisor: 2, admin: 3 };

/** People with a part in a thread's story, and those with none. */
export const PEOPLE = {
  filer: "operator",
  starter: "operator",
  answerer: "supervisor",
  editor: "supervisor",
  other_operator: "operator",
  supervisor: "supervisor",
  admin: "admin",
  viewer: "viewer",
} as const satisfies Record<string, Role>;
export type Person = keyof typeof PEOPLE;
/** Every principal kind: the people, a deadline's expiry answer, and a bulk request (made by the filer). */
export type Kind = Person | "system_expiry" | "bulk";
export const KINDS: Kind[] = [...(Object.keys(PEOPLE) as Person[]), "system_expiry", "bulk"];
export type Route = "runs" | "decision" | "bulk" | "sla";

export interface Question {
  interruptId: string;
  payload: Record<string, unknown>;
}

interface ServerContext {
  url(path: string): string;
  server?: { url: string } | undefined;
  prepared: { sql: { rows<T>(text: string, params?: unknown[]): Promise<T[]> } };
}

/** The people signed in on `ctx`'s server, and the routes they answer through. */
export function decisionHarness(ctx: ServerContext) {
  const cookies = new Map<Person, string>();
  const ids = new Map<Person, string>();
  const emailOf = (person: Person) => (person === "admin" ? "admin@test.local" : `${person}.mx@test.local`);

  const as = (who: Person, path: string, init: RequestInit = {}) =>
    authedFetch(ctx.url(path), {
      ...init,
      headers: { "content-type": "application/json", ...(init.headers ?? {}), cookie: cookies.get(who)! },
    });

  async function people() {
    if (cookies.size) return;
    for (const [person, role] of Object.entries(PEOPLE) as [Person, Role][]) {
      if (person !== "admin") {
        const res = await authedFetch(
          ctx.url("/api/admin/users"),
          {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({
              email: emailOf(person),
              name: `Matrix ${person}`,
              password: TEST_PASSWORD,
              role,
            }),
          },
          "admin",
        );
        expect([201, 409]).toContain(res.status);
      }
      cookies.set(person, await signIn(ctx.server!.url, emailOf(person)));
    }
    const { items } = await (await authedFetch(ctx.url("/api/admin/users"), {}, "admin")).json();
    for (const person of Object.keys(PEOPLE) as Person[]) {
      const user = (items as { id: string; email: string }[]).find((u) => u.email === emailOf(person));
      if (!user) throw new Error(`no user ${emailOf(person)}`);
      ids.set(person, user.id);
    }
  }

  /** The thread's view once no run of it is active. */
  async function settle(threadId: string) {
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const view = await (await as("admin", `/api/threads/${threadId}`)).json();
      if (!view.activeRunId && view.status !== "running") return view;
      await new Promise((r) => setTimeout(r, 40));
    }
    throw new Error(`${threadId} still running after 30 s`);
  }

  const driver = {
    /** File a ticket (its fields as the agent's intake reads them) as `by`. */
    async file(by: Person, ticket: Record<string, unknown>, agent: string): Promise<string> {
      const res = await as(by, "/api/threads", {
        method: "POST",
        body: JSON.stringify({ ...ticket, agent }),
      });
      if (res.status !== 201) throw new Error(`file: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { threadId: string }).threadId;
    },
    async start(by: Person, threadId: string, message: string): Promise<void> {
      const res = await as(by, `/api/threads/${threadId}/runs`, {
        method: "POST",
        headers: { accept: "text/event-stream" },
        body: JSON.stringify(runBody(threadId, undefined, message)),
      });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`start: ${res.status} ${text}`);
      await settle(threadId);
    },
    async decide(by: Person, threadId: string, interruptId: string, answer: unknown): Promise<void> {
      const res = await as(by, `/api/threads/${threadId}/decisions/${interruptId}`, {
        method: "POST",
        body: JSON.stringify({ answer }),
      });
      if (res.status !== 202 && res.status !== 200)
        throw new Error(`decide: ${res.status} ${await res.text()}`);
      await settle(threadId);
    },
    async fork(
      by: Person,
      threadId: string,
      interruptId: string,
      values: unknown,
      asNode?: string,
    ): Promise<void> {
      const view = await settle(threadId);
      const at = (view.decisions as { interruptId: string; checkpointId: string }[]).find(
        (d) => d.interruptId === interruptId,
      )?.checkpointId;
      const res = await as(by, `/api/threads/${threadId}/fork`, {
        method: "POST",
        body: JSON.stringify({ checkpointId: at, values, ...(asNode ? { asNode } : {}) }),
      });
      if (res.status !== 202) throw new Error(`fork: ${res.status} ${await res.text()}`);
      await settle(threadId);
    },
    async pending(threadId: string): Promise<(Question & { action: string })[]> {
      return (await settle(threadId)).pendingInterrupts;
    },
  };

  /** Row counts of every table (sessions and limits aside): equal before and after means nothing was written. */
  async function counts(): Promise<string> {
    const tables = await ctx.prepared.sql.rows<{ t: string }>(
      `SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) AS t FROM information_schema.tables
       WHERE table_schema IN ('public', 'checkpoint') AND table_type = 'BASE TABLE'
         AND table_name NOT IN ('session', 'sessions', 'rate_limits', 'verification', 'account', 'audit_chain',
           'audit_chain_state', 'thread_followers')
       ORDER BY 1`,
    );
    const [row] = await ctx.prepared.sql.rows<{ c: string }>(
      `SELECT concat_ws(' ', ${tables.map((t) => `'${t.t}=' || (SELECT count(*) FROM ${t.t})`).join(", ")}) AS c`,
    );
    return row!.c;
  }

  /** Answer as `kind` through `route` (bulk says `verb`): the status, and the refusal code if any. */
  async function attempt(
    reached: { threadId: string; interruptId: string; action: string },
    kind: Kind,
    verb: "approve" | "reject",
    answer: unknown,
    route: Route,
  ): Promise<{ status: number; code: string | null; taken: boolean }> {
    const { threadId, interruptId } = reached;
    if (route === "sla") {
      const rule = { action: reached.action, minAmountCents: 0, dueSeconds: 3600 };
      const res = await as("admin", "/api/admin/sla", {
        method: "POST",
        body: JSON.stringify({ ...rule, expiryAnswer: { status: "resolved", payload: answer } }),
      });
      const body = await res.json();
      if (res.status === 200) {
        await as("admin", "/api/admin/sla", {
          method: "POST",
          body: JSON.stringify({ ...rule, remove: true }),
        });
      }
      return { status: res.status, code: body.code ?? null, taken: res.status === 200 };
    }
    const who: Person = kind === "bulk" ? "filer" : (kind as Person);
    if (route === "bulk") {
      const res = await as(who, "/api/inbox/bulk", {
        method: "POST",
        body: JSON.stringify({ interruptIds: [interruptId], verb, note: "Bulk note." }),
      });
      const body = await res.json();
      if (res.status !== 200) return { status: res.status, code: body.code ?? null, taken: false };
      const refused = (body.refused as { code: string }[])[0];
      return { status: 200, code: refused?.code ?? null, taken: (body.done as unknown[]).length === 1 };
    }
    const res =
      route === "runs"
        ? await as(who, `/api/threads/${threadId}/runs`, {
            method: "POST",
            headers: { accept: "text/event-stream" },
            body: JSON.stringify(runBody(threadId, [{ interruptId, status: "resolved", payload: answer }])),
          })
        : await as(who, `/api/threads/${threadId}/decisions/${interruptId}`, {
            method: "POST",
            body: JSON.stringify({ answer }),
          });
    const text = await res.text();
    const json = res.headers.get("content-type")?.includes("application/json") ? JSON.parse(text) : null;
    return {
      status: res.status,
      code: res.status >= 400 ? (json?.code ?? null) : null,
      taken: res.status < 300,
    };
  }

  /** Wait until the thread's recorded effects are delivered (the dispatcher writes those rows). */
  async function effectsSettled(threadId: string) {
    const settleBy = Date.now() + 20_000;
    const busy = async () =>
      (
        await ctx.prepared.sql.rows<{ n: string }>(
          "SELECT count(*) AS n FROM effects WHERE thread_id = $1 AND status IN ('queued', 'sending')",
          [threadId],
        )
      )[0]?.n !== "0";
    while ((await busy()) && Date.now() < settleBy) await new Promise((r) => setTimeout(r, 50));
  }

  /** A second admin (four-eyes on configuration: one admin proposes, another approves), created when first asked. */
  let secondAdmin = "";
  async function asSecondAdmin(path: string, body: unknown): Promise<Response> {
    if (!secondAdmin) {
      const res = await as("admin", "/api/admin/users", {
        method: "POST",
        body: JSON.stringify({
          email: "admin2.mx@test.local",
          name: "Second admin",
          password: TEST_PASSWORD,
          role: "admin",
        }),
      });
      expect([201, 409]).toContain(res.status);
      secondAdmin = await signIn(ctx.server!.url, "admin2.mx@test.local");
    }
    return authedFetch(ctx.url(path), {
      method: "POST",
      headers: { "content-type": "application/json", cookie: secondAdmin },
      body: JSON.stringify(body),
    });
  }

  /**
   * A money-limit change proposed by the admin and approved by the second admin: the approval's status and answer
   * (with the limits after it), or the proposal's refusal.
   */
  async function changeLimit(body: Record<string, unknown>): Promise<{
    status: number;
    body: Record<string, unknown> & { limits?: { id: string; subjectId: string }[] };
  }> {
    const res = await as("admin", "/api/admin/authority", { method: "POST", body: JSON.stringify(body) });
    const proposed = await res.json();
    if (res.status !== 202) return { status: res.status, body: proposed };
    const approved = await asSecondAdmin(`/api/admin/proposals/${proposed.proposal.id}`, {
      decision: "approve",
    });
    const result = await approved.json();
    return { status: approved.status, body: { ...result, limits: result.result?.limits } };
  }

  return {
    people,
    as,
    settle,
    driver,
    counts,
    attempt,
    effectsSettled,
    ids,
    cookies,
    asSecondAdmin,
    changeLimit,
  };
}

export type Driver = ReturnType<typeof decisionHarness>["driver"];

/**
 * A refusal as the policy suites expect it through one route: not taken, the policy's code, and the status — bulk
 * answers 200 and lists each item's refusal, a request it refuses whole (role, action) is a 4xx. Records the route
 * the code came back through in `seen`.
 */
export function expectRefused(
  got: { status: number; code: string | null; taken: boolean },
  want: { status: number; code: string },
  route: Route,
  label: string,
  seen: Map<string, Set<string>>,
): void {
  expect(got.taken, label).toBe(false);
  expect(got.code, label).toBe(want.code);
  const perItem = route === "bulk" && want.code.startsWith("forbidden:") && want.code !== "forbidden:role";
  expect(got.status, label).toBe(perItem ? 200 : want.status);
  if (!seen.has(want.code)) seen.set(want.code, new Set());
  seen.get(want.code)!.add(route);
}

/** A small seeded generator (mulberry32): the same seed, the same matrix sample, on every run. */
export interface Rng {
  nextInt(min: number, max: number): number;
}
export function seeded(seed: number): Rng {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { nextInt: (min, max) => min + Math.floor(next() * (max - min + 1)) };
}
