import { authedFetch, emailOf, signIn, TEST_PASSWORD } from "../support/auth";
import { decisionHarness } from "../support/decide";
import { agentFor, createTicket, runOnce } from "./client";
import { serverOn, useTestServer } from "./setup";

/*
 * Delegated authority (issue 57): money limits per person and per team, per decision and per day, set by an admin and
 * held in the one policy path every route takes — the AG-UI resume, the decision route and bulk refuse the same
 * decision with the same code and write nothing; the check before the click says so and names who may take it
 * instead; within the limit, and for someone without one, the same decision is taken.
 */
describe("delegated authority: limits per person and per team", () => {
  // Large card orders (€500.00 each): every one asks for a person's approval, an operator may give it.
  const ctx = useTestServer("authority", { prefix: "ORD-5", count: 10 });
  const h = decisionHarness(ctx);
  let next = 0;

  async function pausedApproval(order = `ORD-5${String(next++).padStart(3, "0")}`) {
    const message = `Refund ${order} please, the screen is broken.`;
    const threadId = await h.driver.file("filer", { message, orderRef: order }, "refund");
    await h.driver.start("starter", threadId, message);
    const [approval] = (await h.driver.pending(threadId)).filter((p) => p.action === "refund_approval");
    if (!approval) throw new Error(`${threadId}: no approval asked`);
    return { threadId, interruptId: approval.interruptId, action: "refund_approval" };
  }

  const setLimit = h.changeLimit;
  const asSecond = h.asSecondAdmin;

  const verdictOf = async (who: Parameters<typeof h.as>[0], q: { threadId: string; interruptId: string }) => {
    const view = await (await h.as(who, `/api/threads/${q.threadId}`)).json();
    return (view.mayDecide as { interruptId: string; may: boolean; code?: string; reason?: string }[]).find(
      (v) => v.interruptId === q.interruptId,
    );
  };

  it("a per-decision limit refuses a larger approval on every route, writes nothing, and says who may instead", async () => {
    await h.people();
    const operator = h.ids.get("other_operator")!;
    const set = await setLimit({ subjectKind: "user", subjectId: operator, perDecisionCents: 30_000 });
    expect(set.status).toBe(200);
    expect(set.body.limits).toMatchObject([
      { subjectKind: "user", subjectId: operator, perDecisionCents: 30_000 },
    ]);

    const q = await pausedApproval();
    const verdict = await verdictOf("other_operator", q);
    expect(verdict).toMatchObject({ may: false, code: "forbidden:authority_per_decision" });
    expect(verdict?.reason).toContain("€300.00 per decision; this one lets €500.00 leave");
    expect(verdict?.reason).toContain("supervisor.mx@test.local");
    // A supervisor without a limit may, before the click and after.
    expect(await verdictOf("supervisor", q)).toMatchObject({ may: true });

    await h.effectsSettled(q.threadId);
    const before = await h.counts();
    for (const route of ["runs", "decision", "bulk"] as const) {
      const got = await h.attempt(q, "other_operator", "approve", { decision: "approve" }, route);
      expect(got, route).toMatchObject({ taken: false, code: "forbidden:authority_per_decision" });
    }
    expect(await h.counts(), "rows written by the refusals").toBe(before);

    // Within the limit: part of it, by the same person.
    const partial = { decision: "approve_partial", amountCents: 25_000, note: "The screen only." };
    expect(await h.attempt(q, "other_operator", "approve", partial, "decision")).toMatchObject({
      taken: true,
    });

    // Someone without a limit takes the whole amount on another thread.
    const other = await pausedApproval();
    expect(await h.attempt(other, "supervisor", "approve", { decision: "approve" }, "runs")).toMatchObject({
      taken: true,
    });
  });

  it("a team's daily limit counts every member's decisions of the day, and removing it lets the next one through", async () => {
    await h.people();
    const team = await (
      await h.as("admin", "/api/admin/teams", {
        method: "POST",
        body: JSON.stringify({ name: "Refund desk" }),
      })
    ).json();
    const teamId = team.team.id as string;
    const members = [h.ids.get("answerer")!, h.ids.get("editor")!];
    const patched = await h.as("admin", `/api/admin/teams/${teamId}`, {
      method: "PATCH",
      body: JSON.stringify({ members }),
    });
    expect(patched.status).toBe(200);
    const set = await setLimit({ subjectKind: "team", subjectId: teamId, perDayCents: 60_000 });
    expect(set.status).toBe(200);

    const first = await pausedApproval();
    expect(await h.attempt(first, "answerer", "approve", { decision: "approve" }, "decision")).toMatchObject({
      taken: true,
    });
    await h.settle(first.threadId);

    // Another member: €500.00 already left by the team today, and €500.00 more would pass €600.00.
    const second = await pausedApproval();
    const verdict = await verdictOf("editor", second);
    expect(verdict).toMatchObject({ may: false, code: "forbidden:authority_per_day" });
    expect(verdict?.reason).toContain(
      "Your team Refund desk's authority is €600.00 a day; €500.00 left by decisions today",
    );
    const before = await h.counts();
    for (const route of ["runs", "decision", "bulk"] as const) {
      const got = await h.attempt(second, "editor", "approve", { decision: "approve" }, route);
      expect(got, route).toMatchObject({ taken: false, code: "forbidden:authority_per_day" });
    }
    expect(await h.counts()).toBe(before);
    // Rejecting moves no money: never limited.
    const third = await pausedApproval();
    expect(
      await h.attempt(third, "editor", "reject", { decision: "reject", note: "Not covered." }, "decision"),
    ).toMatchObject({ taken: true });

    const limitId = (set.body.limits as { id: string; subjectId: string }[]).find(
      (l) => l.subjectId === teamId,
    )!.id;
    expect((await setLimit({ remove: limitId })).status).toBe(200);
    expect(await h.attempt(second, "editor", "approve", { decision: "approve" }, "decision")).toMatchObject({
      taken: true,
    });
  });

  it("a per-customer limit counts what the person let leave to that customer over 30 days, on any thread", async () => {
    await h.people();
    const admin = h.ids.get("admin")!;
    const set = await setLimit({ subjectKind: "user", subjectId: admin, perCustomer30dCents: 40_000 });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    const limitId = (set.body.limits as { id: string; subjectId: string }[]).find(
      (l) => l.subjectId === admin,
    )!.id;
    const order = `ORD-5${String(next++).padStart(3, "0")}`;
    const first = await pausedApproval(order);
    const part = { decision: "approve_partial", amountCents: 30_000, note: "Part of it." };
    expect(await h.attempt(first, "admin", "approve", part, "decision")).toMatchObject({ taken: true });
    await h.settle(first.threadId);

    // The same customer on another thread: €300.00 already, the €200.00 left on the order would pass €400.00.
    const again = await pausedApproval(order);
    const verdict = await verdictOf("admin", again);
    expect(verdict).toMatchObject({ may: false, code: "forbidden:authority_per_customer" });
    expect(verdict?.reason).toContain("€400.00 per customer over 30 days; €300.00 left for this customer");
    const before = await h.counts();
    for (const route of ["runs", "decision"] as const) {
      const rest = { decision: "approve_partial", amountCents: 20_000, note: "The rest." };
      const got = await h.attempt(again, "admin", "approve", rest, route);
      expect(got, route).toMatchObject({ taken: false, code: "forbidden:authority_per_customer" });
    }
    expect(await h.counts()).toBe(before);

    // Another customer: nothing let leave to them yet.
    const other = await pausedApproval();
    expect(await h.attempt(other, "admin", "approve", part, "runs")).toMatchObject({ taken: true });
    expect((await setLimit({ remove: limitId })).status).toBe(200);
  });

  it("an admin alone changes no limit: the proposal waits, its proposer cannot approve it, it is decided once", async () => {
    await h.people();
    const filer = h.ids.get("filer")!;
    const before = await (await h.as("admin", "/api/admin/authority")).json();
    const res = await h.as("admin", "/api/admin/authority", {
      method: "POST",
      body: JSON.stringify({ subjectKind: "user", subjectId: filer, perDecisionCents: 100 }),
    });
    expect(res.status).toBe(202);
    const { proposal } = await res.json();
    expect(proposal).toMatchObject({ kind: "authority", status: "pending" });
    // Nothing applies until a second admin approves it: the limits are as they were, the filer decides as before.
    expect(await (await h.as("admin", "/api/admin/authority")).json()).toEqual(before);
    const pending = await (await h.as("admin", "/api/admin/proposals")).json();
    expect(pending.proposals.map((p: { id: string }) => p.id)).toContain(proposal.id);

    // Hostile probes by the proposer and by non-admins: each refused, nothing applied.
    const decide = (who: Parameters<typeof h.as>[0], id: string, body: unknown) =>
      h.as(who, `/api/admin/proposals/${id}`, { method: "POST", body: JSON.stringify(body) });
    const own = await decide("admin", proposal.id, { decision: "approve" });
    expect([own.status, (await own.json()).code]).toEqual([403, "forbidden:four_eyes_config"]);
    for (const who of ["supervisor", "other_operator", "viewer"] as const) {
      expect((await decide(who, proposal.id, { decision: "approve" })).status, who).toBe(403);
    }
    expect((await decide("supervisor", proposal.id, { decision: "reject" })).status).toBe(403);
    expect((await decide("admin", "no-such-proposal", { decision: "approve" })).status).toBe(404);
    expect((await decide("admin", proposal.id, { decision: "apply" })).status).toBe(400);
    expect(await (await h.as("admin", "/api/admin/authority")).json()).toEqual(before);

    // A second admin approves: it applies, once.
    const approved = await asSecond(`/api/admin/proposals/${proposal.id}`, { decision: "approve" });
    expect(approved.status).toBe(200);
    const after = await (await h.as("admin", "/api/admin/authority")).json();
    expect(after.limits).toEqual(
      expect.arrayContaining([expect.objectContaining({ subjectId: filer, perDecisionCents: 100 })]),
    );
    const again = await asSecond(`/api/admin/proposals/${proposal.id}`, { decision: "approve" });
    expect([again.status, (await again.json()).code]).toEqual([409, "conflict:proposal_decided"]);

    // Withdrawn by its proposer: rejected, nothing applied.
    const removal = await (
      await h.as("admin", "/api/admin/authority", {
        method: "POST",
        body: JSON.stringify({
          remove: after.limits.find((l: { subjectId: string }) => l.subjectId === filer).id,
        }),
      })
    ).json();
    expect(
      (await decide("admin", removal.proposal.id, { decision: "reject", note: "Not now." })).status,
    ).toBe(200);
    expect(await (await h.as("admin", "/api/admin/authority")).json()).toEqual(after);
    const decided = await ctx.prepared.sql.rows<{ detail: Record<string, unknown> }>(
      "SELECT detail FROM audit_log WHERE action = 'config_decided' ORDER BY id",
    );
    expect(decided.map((d) => d.detail.status)).toEqual(expect.arrayContaining(["applied", "rejected"]));
  });

  it("only an admin sets a limit; one that names nobody or caps nothing is refused; every change is audited", async () => {
    await h.people();
    const asSupervisor = await h.as("supervisor", "/api/admin/authority", {
      method: "POST",
      body: JSON.stringify({ subjectKind: "user", subjectId: h.ids.get("filer"), perDecisionCents: 1 }),
    });
    expect(asSupervisor.status).toBe(403);
    // Refused proposals write nothing: no proposal, no audit entry.
    const proposalsBefore = await ctx.prepared.sql.count("config_proposals");
    expect(
      (await setLimit({ subjectKind: "user", subjectId: "nobody", perDecisionCents: 100 })).body,
    ).toMatchObject({
      code: "unprocessable:authority_limit",
    });
    expect((await setLimit({ subjectKind: "user", subjectId: h.ids.get("filer") })).body).toMatchObject({
      code: "unprocessable:authority_limit",
    });
    expect((await setLimit({ subjectKind: "robot", subjectId: "x", perDayCents: 1 })).body).toMatchObject({
      code: "bad_request:authority",
    });
    expect(await ctx.prepared.sql.count("config_proposals")).toBe(proposalsBefore);
    const audit = await ctx.prepared.sql.rows<{ detail: Record<string, unknown> }>(
      "SELECT detail FROM audit_log WHERE action = 'authority_changed' ORDER BY id",
    );
    // Every applied change, none of the refused or pending ones: the team's limit set and removed is among them.
    expect(audit.map((a) => a.detail.after)).toContainEqual({
      perDecisionCents: null,
      perDayCents: 60_000,
      perCustomer30dCents: null,
    });
    expect(
      audit.some(
        (a) =>
          a.detail.after === null && (a.detail.before as { perDayCents?: number })?.perDayCents === 60_000,
      ),
    ).toBe(true);
  });
});

/*
 * The same limits on the embedded database (PGlite): proposed and approved by two admins, read before the click, and
 * held when deciding — the day's and the customer's sums and the lock per limit run there as on Postgres.
 */
describe("delegated authority on the embedded database", () => {
  let base = "";
  let stop: () => Promise<void> = async () => {};
  beforeAll(async () => {
    ({ base, stop } = await serverOn("pglite", "authority", {}));
  }, 120_000);
  afterAll(() => stop());

  it("a per-customer limit refuses an operator's approval before the click and when deciding; removed, it is taken", async () => {
    const post = (who: "admin" | "operator", path: string, body: unknown) =>
      authedFetch(
        `${base}${path}`,
        { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) },
        who,
      );
    const created = await post("admin", "/api/admin/users", {
      email: "admin2.embedded@test.local",
      name: "Second admin",
      password: TEST_PASSWORD,
      role: "admin",
    });
    expect(created.status).toBe(201);
    const second = await signIn(base, "admin2.embedded@test.local");
    const change = async (body: Record<string, unknown>) => {
      const proposed = await post("admin", "/api/admin/authority", body);
      expect(proposed.status).toBe(202);
      const { proposal } = await proposed.json();
      const approved = await authedFetch(`${base}/api/admin/proposals/${proposal.id}`, {
        method: "POST",
        headers: { "content-type": "application/json", cookie: second },
        body: JSON.stringify({ decision: "approve" }),
      });
      expect(approved.status).toBe(200);
      return (await approved.json()).result.limits as { id: string; subjectId: string }[];
    };
    const users = (await (await authedFetch(`${base}/api/admin/users`, {}, "admin")).json()).items as {
      id: string;
      email: string;
    }[];
    const operator = users.find((u) => u.email === emailOf("operator"))!.id;
    const limits = await change({
      subjectKind: "user",
      subjectId: operator,
      perDayCents: 1_000_000,
      perCustomer30dCents: 10_000,
    });

    // Headphones, €249.00: an operator may approve it, but not past €100.00 to one customer.
    const message = "My headphones from ORD-1002 are broken, please refund them.";
    const threadId = await createTicket(base, message, "ORD-1002");
    const first = await runOnce(agentFor(base, threadId), { message });
    const approval = first.interrupts.find((i) => i.reason === "refund_approval")!;
    const view = async () => (await authedFetch(`${base}/api/threads/${threadId}`, {}, "operator")).json();
    expect((await view()).mayDecide).toMatchObject([
      { interruptId: approval.id, may: false, code: "forbidden:authority_per_customer" },
    ]);
    const refused = await post("operator", `/api/threads/${threadId}/decisions/${approval.id}`, {
      answer: { decision: "approve" },
    });
    expect([refused.status, (await refused.json()).code]).toEqual([403, "forbidden:authority_per_customer"]);
    expect((await view()).pendingInterrupts.map((p: { interruptId: string }) => p.interruptId)).toEqual([
      approval.id,
    ]);

    await change({ remove: limits.find((l) => l.subjectId === operator)!.id });
    const taken = await post("operator", `/api/threads/${threadId}/decisions/${approval.id}`, {
      answer: { decision: "approve" },
    });
    expect(taken.status).toBeLessThan(300);
  });
});
