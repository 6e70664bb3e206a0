import { DrizzleCheckpointSaver } from "@/lib/checkpoint/saver";
import { type Database, openPostgres } from "@/lib/db/open";
import { isBulkAction } from "@/lib/queue/bulk-answers";
import { type AgentDefinition, listAgents } from "@/lib/runtime/agents/registry";
import { useTestServer } from "../api/setup";
import { threadPrint } from "../support/db-print";
import {
  decisionHarness,
  expectRefused,
  KINDS,
  type Kind,
  PEOPLE,
  type Person,
  type Route,
  seeded,
} from "../support/decide";
import { agentsUnderCheck, exampleTickets } from "./coverage";
import {
  acts,
  expectedToolReview,
  type GeneratedAnswer,
  OK,
  type Outcome,
  type Story,
  toolReviewAnswers,
} from "./oracle";

/*
 * The decision policy of every agent package, generated — no scenario written for any agent. For each agent the suites
 * cover (its questions are the kit's kinds and its policy is declared as rules: ./coverage.ts), the suite files each
 * ticket the agent declares as an example, walks to every question it reaches (answering earlier ones as an admin)
 * and fails when a declared interrupt node is never reached. At each question: every principal kind × every answer
 * the question allows (./oracle.ts), the outcome derived from the declaration; every refusal tried through every
 * route that takes the answer (AG-UI resume, the decision route, bulk, an SLA expiry answer) with its code and not
 * one row written; every accepted answer taken, on a fresh thread brought to the same question, by that person.
 * `npm run agent:check <id>` runs it (and the flow suite) for one agent.
 */

interface Step {
  node: string;
  action: string;
  answer: unknown;
}
interface Reached {
  agent: AgentDefinition;
  ticket: Record<string, unknown>;
  /** The answers given (as an admin) on the way here. */
  path: Step[];
  node: string;
  threadId: string;
  interruptId: string;
  action: string;
  payload: Record<string, unknown>;
  story: Story;
}

/** The answers the suite tries on a question of a kit kind. */
function answersFor(
  agent: AgentDefinition,
  action: string,
  payload: Record<string, unknown>,
  seed: number,
): GeneratedAnswer[] {
  const rng = seeded(seed);
  if (action === "tool_review") return toolReviewAnswers(agent, payload, rng);
  if (action === "input_text") return [{ kind: "text", decided: [], wire: { text: "INV-2001" } }];
  if (action === "select_option") {
    const options = (payload.options as { id: string }[]).map((o) => o.id);
    return options.map((id) => ({ kind: `option ${id}`, decided: [], wire: { optionId: id } }));
  }
  throw new Error(`${agent.id} asks ${action}, which the generated suites do not cover`);
}

/** What the declaration gives `kind` for an answer to a question of a kit kind. */
function expected(reached: Reached, kind: Kind, answer: GeneratedAnswer): Outcome {
  if (reached.action === "tool_review")
    return expectedToolReview(reached.agent, reached.payload, reached.story, kind, answer);
  // A text or a choice acts on nothing: anyone who may decide may give it; bulk cannot say it.
  if (kind === "viewer") return { ok: false, status: 403, code: "forbidden:role" };
  if (kind === "bulk" && !isBulkAction(reached.action))
    return { ok: false, status: 422, code: "unprocessable:bulk_action" };
  return OK;
}

function actsOn(reached: Reached, answer: GeneratedAnswer): boolean {
  return reached.action === "tool_review" && acts(reached.payload, answer);
}

/** The money an answer lets leave, by the agent's declaration (what its receipt would authorize). */
function amountOf(agent: AgentDefinition, payload: Record<string, unknown>, answer: unknown): number {
  const authorized = [
    ...(agent.interrupts.authorizes?.(payload as never, answer) ?? []),
    ...(agent.authorizes?.(payload as never, answer) ?? []),
  ];
  return authorized.reduce((sum, a) => sum + ("amountCents" in a ? a.amountCents : 0), 0);
}

const agents = agentsUnderCheck(listAgents());

describe.runIf(agents.length > 0)("the policy of every agent package, generated from its declaration", () => {
  const ctx = useTestServer("agentpolicy");
  const h = decisionHarness(ctx);
  /** Money limits, proposed by the admin and approved by a second admin (four-eyes on configuration). */
  const limits = {
    async set(body: Record<string, unknown>): Promise<string> {
      const { status, body: after } = await h.changeLimit(body);
      expect(status, JSON.stringify(after)).toBe(200);
      return after.limits!.find((l) => l.subjectId === body.subjectId)!.id;
    },
    async remove(id: string) {
      expect((await h.changeLimit({ remove: id })).status).toBe(200);
    },
  };
  let database: Database;
  beforeAll(() => {
    database = openPostgres(ctx.prepared.url, { max: 2 });
  });
  afterAll(async () => {
    await database?.close();
  });

  /** The graph node that raised each pending interrupt of a thread (read from its checkpoints). */
  async function nodesOf(agent: AgentDefinition, threadId: string): Promise<Map<string, string>> {
    const graph = agent.build({ checkpointer: new DrizzleCheckpointSaver(database.sql), db: database.db });
    const state = await graph.getState({ configurable: { thread_id: threadId } });
    const out = new Map<string, string>();
    for (const task of state.tasks) for (const i of task.interrupts ?? []) if (i.id) out.set(i.id, task.name);
    return out;
  }

  /** File a ticket, start it, follow `path`; the questions pending then, with their nodes. */
  async function bring(agent: AgentDefinition, ticket: Record<string, unknown>, path: Step[]) {
    const threadId = await h.driver.file("filer", ticket, agent.id);
    await h.driver.start("starter", threadId, String(ticket.message));
    for (const step of path) {
      const nodes = await nodesOf(agent, threadId);
      const q = (await h.driver.pending(threadId)).find(
        (p) => p.action === step.action && nodes.get(p.interruptId) === step.node,
      );
      if (!q) throw new Error(`${agent.id}: ${step.node} not asked again on a fresh thread`);
      await h.driver.decide("admin", threadId, q.interruptId, step.answer);
    }
    const nodes = await nodesOf(agent, threadId);
    return {
      threadId,
      pending: (await h.driver.pending(threadId)).map((p) => ({
        ...p,
        node: nodes.get(p.interruptId) ?? "?",
      })),
    };
  }

  /** Every question the agent's example tickets reach, up to three answers deep. */
  async function walk(agent: AgentDefinition): Promise<Reached[]> {
    const out: Reached[] = [];
    let frontier = exampleTickets(agent).map((ticket) => ({ ticket, path: [] as Step[] }));
    for (let depth = 0; depth < 3 && frontier.length > 0; depth++) {
      const next: typeof frontier = [];
      for (const { ticket, path } of frontier) {
        const { threadId, pending } = await bring(agent, ticket, path);
        for (const q of pending) {
          // Who supplied input: the filer always; the starter until a decision was taken since its run began.
          const involved = new Set<Person>(["filer", ...(path.length === 0 ? (["starter"] as const) : [])]);
          if (path.some((s) => s.action === "input_text")) involved.add("admin");
          const payload = q.payload as Record<string, unknown>;
          const reached: Reached = {
            agent,
            ticket,
            path,
            node: q.node,
            threadId,
            interruptId: q.interruptId,
            action: q.action,
            payload,
            story: { involved },
          };
          out.push(reached);
          // Go on past it with an answer that acts (an admin's, who is involved in nothing).
          const acting = answersFor(agent, q.action, payload, 1).find(
            (a) => a.kind === "approve" || a.kind === "text",
          );
          if (acting && pending.length === 1)
            next.push({ ticket, path: [...path, { node: q.node, action: q.action, answer: acting.wire }] });
        }
      }
      frontier = next;
    }
    return out;
  }

  const seen = new Map<string, Set<string>>();

  for (const agent of agents) {
    it(`${agent.id}: every question its examples reach — every refusal through every route, every accepted answer taken`, async () => {
      await h.people();
      const reached = await walk(agent);
      const nodes = new Set(reached.map((r) => r.node));
      expect(
        agent.interruptNodes.filter((n) => !nodes.has(n)),
        `${agent.id}: interrupt nodes no example ticket reaches (declare an example that does)`,
      ).toEqual([]);

      let combos = 0;
      let refusedCount = 0;
      let acceptedCount = 0;
      for (const [index, q] of reached.entries()) {
        const answers = answersFor(agent, q.action, q.payload, 31 + index);
        const rng = seeded(97 + index);
        const all = KINDS.flatMap((kind) =>
          answers
            .filter((a) => kind !== "bulk" || a.verb !== undefined || !isBulkAction(q.action))
            .map((answer) => ({ kind, answer, outcome: expected(q, kind, answer) })),
        );
        combos += all.length;
        const routesFor = (kind: Kind, answer: GeneratedAnswer): Route[] => {
          if (kind === "system_expiry") return ["sla"];
          if (kind === "bulk") return ["bulk"];
          return ["runs", "decision", ...(isBulkAction(q.action) && answer.verb ? (["bulk"] as const) : [])];
        };

        // Before the click: what the thread page says each person may do is the declaration's word on the acting answer.
        const actingAnswer = answers.find((a) => actsOn(q, a)) ?? answers[0]!;
        for (const person of Object.keys(PEOPLE) as Person[]) {
          const view = await (await h.as(person, `/api/threads/${q.threadId}`)).json();
          const verdict = (view.mayDecide as { interruptId: string; may: boolean; code?: string }[]).find(
            (v) => v.interruptId === q.interruptId,
          );
          const want = expected(q, person, actingAnswer);
          expect(verdict, `${agent.id} ${q.node}: ${person} before the click`).toMatchObject(
            want.ok ? { may: true } : { may: false, code: want.code },
          );
        }

        // Every refusal through every route: the declared code, and nothing written anywhere.
        await h.effectsSettled(q.threadId);
        const before = await h.counts();
        const printed = await threadPrint(ctx.prepared.sql.rows, q.threadId);
        for (const c of all.filter((c) => !c.outcome.ok)) {
          const want = c.outcome as Extract<Outcome, { ok: false }>;
          for (const route of routesFor(c.kind, c.answer)) {
            const got = await h.attempt(q, c.kind, c.answer.verb ?? "approve", c.answer.wire, route);
            expectRefused(
              got,
              want,
              route,
              `${agent.id} ${q.node}: ${c.kind} ${c.answer.kind} via ${route}`,
              seen,
            );
            refusedCount += 1;
          }
        }
        expect(await h.counts(), `${agent.id} ${q.node}: rows written by refusals`).toBe(before);
        expect(await threadPrint(ctx.prepared.sql.rows, q.threadId)).toBe(printed);

        // Delegated authority: a limit just below what the acting answer lets leave, for someone the declaration lets
        // give it, refuses it on every route with the limit's code, writes nothing; taken away, it is theirs again.
        const money = answers
          .filter((a) => actsOn(q, a))
          .map((a) => ({ answer: a, cents: amountOf(agent, q.payload, a.wire) }))
          .find((m) => m.cents > 0);
        const limited = (["other_operator", "supervisor", "admin"] as const).find(
          (p) => money && expected(q, p, money.answer).ok,
        );
        if (money && limited) {
          const person = h.ids.get(limited)!;
          for (const [caps, code] of [
            [{ perDecisionCents: money.cents - 1 }, "forbidden:authority_per_decision"],
            [{ perDayCents: money.cents - 1 }, "forbidden:authority_per_day"],
            [{ perCustomer30dCents: money.cents - 1 }, "forbidden:authority_per_customer"],
          ] as const) {
            const limitId = await limits.set({ subjectKind: "user", subjectId: person, ...caps });
            const before = await h.counts();
            for (const route of routesFor(limited, money.answer)) {
              const got = await h.attempt(
                q,
                limited,
                money.answer.verb ?? "approve",
                money.answer.wire,
                route,
              );
              expectRefused(
                got,
                { status: 403, code },
                route,
                `${agent.id} ${q.node}: ${limited} over ${code}`,
                seen,
              );
              refusedCount += 1;
            }
            expect(await h.counts(), `${agent.id}: rows written by ${code} refusals`).toBe(before);
            await limits.remove(limitId);
          }
        }

        // Every accepted answer, each on a fresh thread brought to the same question.
        for (const c of all.filter((c) => c.outcome.ok)) {
          let fresh: Reached = q;
          if (c.kind !== "system_expiry") {
            const { threadId, pending } = await bring(agent, q.ticket, q.path);
            const same = pending.find((p) => p.node === q.node && p.action === q.action);
            if (!same) throw new Error(`${agent.id}: ${q.node} not reached again`);
            fresh = {
              ...q,
              threadId,
              interruptId: same.interruptId,
              payload: same.payload as Record<string, unknown>,
            };
          }
          const routes = routesFor(c.kind, c.answer);
          const route = routes[rng.nextInt(0, routes.length - 1)]!;
          const label = `${agent.id} ${q.node}: ${c.kind} ${c.answer.kind} via ${route}`;
          const got = await h.attempt(fresh, c.kind, c.answer.verb ?? "approve", c.answer.wire, route);
          expect(got, label).toMatchObject({ taken: true, code: null });
          acceptedCount += 1;
          if (route === "sla") continue;
          const view = await h.settle(fresh.threadId);
          expect(["failed", "needs_attention"], `${label}: the thread after`).not.toContain(view.status);
          const who: Person = c.kind === "bulk" ? "filer" : (c.kind as Person);
          const [row] = await ctx.prepared.sql.rows<{ status: string; resolved_by_id: string | null }>(
            "SELECT status, resolved_by_id FROM decisions WHERE interrupt_id = $1",
            [fresh.interruptId],
          );
          expect(row?.status, label).toBe("resolved");
          expect(row?.resolved_by_id, label).toBe(h.ids.get(who));
        }
      }
      console.info(
        `[generated policy] ${agent.id}: ${reached.length} question(s) reached at ${[...nodes].join(", ")}; ${combos} combinations, ${refusedCount} refusals tried, ${acceptedCount} accepted answers taken`,
      );
    });
  }

  it("every refusal code came back through every route that takes the answer", () => {
    for (const [code, routes] of seen) {
      if (code === "unprocessable:sla_acting_answer") expect([...routes]).toEqual(["sla"]);
      else if (code === "unprocessable:bulk_action") expect([...routes]).toEqual(["bulk"]);
      else expect([...routes].filter((r) => r !== "bulk").sort(), code).toEqual(["decision", "runs"]);
    }
    console.info(
      `[generated policy] codes: ${[...seen].map(([code, routes]) => `${code} via ${[...routes].sort().join("/")}`).join("; ")}`,
    );
  });
});
