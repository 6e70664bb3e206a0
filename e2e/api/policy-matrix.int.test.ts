import { describe, expect, it } from "vitest";
import { isBulkAction } from "@/lib/queue/bulk-answers";
import { listAgents } from "@/lib/runtime/agents/registry";
import { generatedSuitesCover } from "../agents/coverage";
import { threadPrint } from "../support/db-print";
import {
  type Driver,
  decisionHarness,
  expectRefused,
  KINDS,
  type Kind,
  PEOPLE,
  type Person,
  type Question,
  RANK,
  type Rng,
  type Role,
  type Route,
  seeded,
} from "../support/decide";
import { emailBodies } from "./sealed";
import { useTestServer } from "./setup";

/*
 * One decision policy for every principal, generated over the registry: every registered agent × every question it
 * asks × every kind of principal × every kind of answer. The expected outcome is the policy written out again below in
 * plain code (`expected`), from the story of how the thread got there — not read from the server. Refusals are tried
 * through every route that takes the answer (AG-UI resume, the single-decision route, bulk) and must be a 4xx with
 * the policy's code and no row written; every accepted answer is taken, on a fresh thread, by that person. Agents
 * whose questions are the kit's (a reviewed tool call, a text, a choice) and whose policy is declared as rules are
 * covered by the suite generated from those declarations instead (e2e/agents/policy.int.test.ts): no scenario here.
 */

/** The kinds of answer per action (the concrete answer is generated from the payload). */
const ANSWERS: Record<string, string[]> = {
  refund_approval: ["approve", "approve_partial", "reject"],
  confirm_email: ["send", "send_edited", "dont_send"],
  review_change: ["approve", "reject"],
  goodwill_voucher: ["grant", "decline"],
  select_option: ["option"],
  input_text: ["text"],
  wait_timer: ["fire", "cancel"],
};
/** The answers that act on the world. */
const ACTING = new Set(["approve", "approve_partial", "send", "send_edited", "grant", "fire"]);
/** What a bulk approve / reject gives, per action. */
const BULK_VERB: Record<string, "approve" | "reject"> = {
  approve: "approve",
  grant: "approve",
  send: "approve",
  reject: "reject",
  decline: "reject",
  dont_send: "reject",
};

/** How a thread got to its question, as the oracle reads it. */
interface Story {
  agent: string;
  action: string;
  /** The node that asked (every interrupt node of every agent must be reached by some scenario). */
  node: string;
  /** Who played a part (absent: nobody of that kind). */
  parts: Partial<Record<"filer" | "starter" | "answerer" | "editor", true>>;
  /** A decision was answered after the starter's run began (the starter no longer counts as input since). */
  decidedSinceStart: boolean;
  /** The earlier answer the `answerer` gave: free text (input for the approval) or the sibling review. */
  earlier?: "free_text" | "sibling_review";
  /** Who approved what the question waits on (the reviews of a change in its cooling-off). */
  approvedBy?: Person[];
  amountCents?: number;
  requiredRole?: Role;
}

type Outcome = { ok: true } | { ok: false; status: number; code: string };
const OK: Outcome = { ok: true };
const refuse = (status: number, code: string): Outcome => ({ ok: false, status, code });

/** The decision policy in plain code. */
function expected(story: Story, kind: Kind, answer: string): Outcome {
  if (kind === "viewer") return refuse(403, "forbidden:role");
  const acting = ACTING.has(answer);
  if (kind === "system_expiry") return acting ? refuse(422, "unprocessable:sla_acting_answer") : OK;
  const who: Person = kind === "bulk" ? "filer" : kind;
  if (kind === "bulk" && !isBulkAction(story.action)) return refuse(422, "unprocessable:bulk_action");
  const role = PEOPLE[who];
  const took = (p: Person) => p === who && (story.parts as Record<string, boolean>)[p] === true;
  const inputFrom =
    took("filer") ||
    took("editor") ||
    (took("starter") && !story.decidedSinceStart) ||
    (took("answerer") && story.earlier === "free_text");
  switch (story.action) {
    case "refund_approval":
      if (!acting) return OK;
      if (inputFrom) return refuse(403, "forbidden:four_eyes_own_thread");
      if ((story.amountCents ?? 0) > 50_000 && RANK[role] < RANK.supervisor)
        return refuse(403, "forbidden:four_eyes_supervisor");
      return OK;
    case "confirm_email":
      return acting && took("editor") ? refuse(403, "forbidden:four_eyes_edited") : OK;
    case "review_change":
      if (RANK[role] < RANK[story.requiredRole ?? "operator"]) return refuse(403, "forbidden:review_role");
      if (!acting) return OK;
      if (inputFrom) return refuse(403, "forbidden:four_eyes_own_thread");
      if (took("answerer") && story.earlier === "sibling_review")
        return refuse(403, "forbidden:four_eyes_both_reviews");
      return OK;
    case "goodwill_voucher":
      return acting && inputFrom ? refuse(403, "forbidden:four_eyes_own_thread") : OK;
    case "wait_timer":
      // The cooling-off fires by itself; a person ending it early skips the protection: a supervisor's call, and
      // never one who filed the change or approved it.
      if (answer !== "fire") return OK;
      if (RANK[role] < RANK.supervisor) return refuse(403, "forbidden:cool_off_early");
      if (inputFrom || story.approvedBy?.includes(who)) return refuse(403, "forbidden:four_eyes_own_thread");
      return OK;
    default:
      return OK;
  }
}

/**
 * A scenario: how a fresh thread of an agent is brought to one question. Every story starts the same way — the filer
 * files the ticket and the starter starts its first run — then `rest` plays the rest and says what the oracle needs.
 */
interface Scenario {
  name: string;
  agent: string;
  action: string;
  node: string;
  message: string | ((order: OrderSpec) => string);
  /** The order the ticket comes with (none: the agent asks for it). */
  withOrder: boolean;
  /** Kinds that cannot occur in this story, and why (printed). */
  absent: Partial<Record<Kind, string>>;
  rest(d: Driver, threadId: string, order: OrderSpec): Promise<Question>;
  /** Who else played a part, and how (the filer and the starter always did). */
  facts: Omit<Story, "agent" | "action" | "node" | "parts" | "amountCents" | "requiredRole"> & {
    also: ("answerer" | "editor")[];
  };
}
interface Reached extends Question {
  threadId: string;
  story: Story;
}
interface OrderSpec {
  id: string;
  amountCents: number;
  method: "card" | "bank_transfer";
}

/** Bring a fresh thread to the scenario's question: the story the oracle reads comes with it. */
async function reach(scenario: Scenario, d: Driver, order: OrderSpec): Promise<Reached> {
  const message = typeof scenario.message === "string" ? scenario.message : scenario.message(order);
  const ticket = { message, ...(scenario.withOrder ? { orderRef: order.id } : {}) };
  const threadId = await d.file("filer", ticket, scenario.agent);
  await d.start("starter", threadId, message);
  const q = await scenario.rest(d, threadId, order);
  const { also, ...facts } = scenario.facts;
  const parts: Story["parts"] = { filer: true, starter: true };
  for (const p of also) parts[p] = true;
  return {
    threadId,
    ...q,
    story: {
      agent: scenario.agent,
      action: scenario.action,
      node: scenario.node,
      parts,
      ...facts,
      amountCents: order.amountCents,
      requiredRole: (q.payload.requiredRole as Role | undefined) ?? "operator",
    },
  };
}

/** The one pending question of `action` (that `pick` accepts). */
const one = async (
  d: Driver,
  threadId: string,
  action: string,
  pick?: (p: Record<string, unknown>) => boolean,
) => {
  const pending = (await d.pending(threadId)).filter(
    (p) => p.action === action && (!pick || pick(p.payload)),
  );
  if (pending.length !== 1)
    throw new Error(`${threadId}: expected one pending ${action}, got ${JSON.stringify(pending)}`);
  return pending[0]!;
};

/** Fork the thread from `action`'s question with `values` edited (by the editor), and return the question asked again. */
async function editedAt(d: Driver, threadId: string, action: string, values: unknown, asNode?: string) {
  const asked = await one(d, threadId, action);
  await d.fork("editor", threadId, asked.interruptId, values, asNode);
  return one(d, threadId, action);
}

const ORDER_NAMED = (order: OrderSpec) => `Refund ${order.id} please, it broke.`;
const EDIT_REASON = { reason: "Only one corner broke." };

const SCENARIOS: Scenario[] = [
  {
    name: "refund: the order number asked (free text)",
    agent: "refund",
    action: "input_text",
    node: "ask_order",
    message: "I would like a refund for my backpack, it tore on day two.",
    withOrder: false,
    absent: { answerer: "no question before the first" },
    rest: (d, threadId) => editedAt(d, threadId, "input_text", { reason: "The strap tore." }, "classify"),
    facts: { also: ["editor"], decidedSinceStart: false },
  },
  {
    name: "refund: the sender confirmed as the order's customer (a choice)",
    agent: "refund",
    action: "select_option",
    node: "lookup_order",
    message: "I would like a refund for my order, it tore on day two.",
    withOrder: false,
    absent: { editor: "a fork re-asks the order number first" },
    async rest(d, threadId, order) {
      const ask = await one(d, threadId, "input_text");
      await d.decide("answerer", threadId, ask.interruptId, { text: order.id });
      return one(d, threadId, "select_option");
    },
    facts: { also: ["answerer"], decidedSinceStart: true, earlier: "free_text" },
  },
  {
    name: "refund: the approval, order named in the message, request edited by a fork",
    agent: "refund",
    action: "refund_approval",
    node: "human_review",
    message: ORDER_NAMED,
    withOrder: true,
    absent: { answerer: "no question before the approval (see the next scenario)" },
    rest: (d, threadId) => editedAt(d, threadId, "refund_approval", EDIT_REASON, "lookup_order"),
    facts: { also: ["editor"], decidedSinceStart: false },
  },
  {
    name: "refund: the approval after an operator typed the order number",
    agent: "refund",
    action: "refund_approval",
    node: "human_review",
    message: "I would like my money back for my order, it broke.",
    withOrder: false,
    absent: { editor: "see the previous scenario" },
    async rest(d, threadId, order) {
      const ask = await one(d, threadId, "input_text");
      await d.decide("answerer", threadId, ask.interruptId, { text: order.id });
      const identity = await one(d, threadId, "select_option");
      await d.decide("answerer", threadId, identity.interruptId, { optionId: "sender_is_customer" });
      return one(d, threadId, "refund_approval");
    },
    facts: { also: ["answerer"], decidedSinceStart: true, earlier: "free_text" },
  },
  {
    name: "refund: the refund method of a bank transfer (a choice)",
    agent: "refund",
    action: "select_option",
    node: "choose_method",
    message: ORDER_NAMED,
    withOrder: true,
    absent: { editor: "an edit is covered at the approval", answerer: "the approver is the supervisor here" },
    async rest(d, threadId) {
      const approval = await one(d, threadId, "refund_approval");
      await d.decide("supervisor", threadId, approval.interruptId, { decision: "approve" });
      return one(d, threadId, "select_option");
    },
    facts: { also: [], decidedSinceStart: true },
  },
  {
    name: "refund: the reply, after an edited request was approved",
    agent: "refund",
    action: "confirm_email",
    node: "confirm_email",
    message: ORDER_NAMED,
    withOrder: true,
    absent: {},
    async rest(d, threadId) {
      const approval = await editedAt(d, threadId, "refund_approval", EDIT_REASON, "lookup_order");
      await d.decide("answerer", threadId, approval.interruptId, { decision: "approve" });
      return one(d, threadId, "confirm_email");
    },
    facts: { also: ["answerer", "editor"], decidedSinceStart: true },
  },
  ...(["fraud", "data"] as const).map(
    (review): Scenario => ({
      name: `account change: the ${review} review, after the other review was approved`,
      agent: "account_change",
      action: "review_change",
      node: `${review}_review`,
      message: "Please change my payout account to DE89 3704 0044 0532 0130 00.",
      withOrder: true,
      absent: {},
      async rest(d, threadId) {
        const asked = await one(d, threadId, "review_change", (p) => p.review === review);
        const edit = { customerMessage: "Please change my payout account to DE44 5001 0517 5407 3249 31." };
        await d.fork("editor", threadId, asked.interruptId, edit);
        const other = await one(d, threadId, "review_change", (p) => p.review !== review);
        await d.decide("answerer", threadId, other.interruptId, { decision: "approve" });
        return one(d, threadId, "review_change", (p) => p.review === review);
      },
      // The other review's answer waits for this one: the same request, not a decision since the start.
      facts: { also: ["answerer", "editor"], decidedSinceStart: false, earlier: "sibling_review" },
    }),
  ),
  {
    name: "account change: the cooling-off timer, after both reviews approved a new payout account",
    agent: "account_change",
    action: "wait_timer",
    node: "cool_off",
    message: "Please change my payout account to DE89 3704 0044 0532 0130 00.",
    withOrder: true,
    absent: {
      editor: "an edit is covered at the reviews",
      system_expiry:
        "a timer's deadline is its own duration, and it fires as system:timer (e2e/api/timers.int.test.ts)",
    },
    async rest(d, threadId) {
      const fraud = await one(d, threadId, "review_change", (p) => p.review === "fraud");
      await d.decide("supervisor", threadId, fraud.interruptId, { decision: "approve" });
      const data = await one(d, threadId, "review_change", (p) => p.review === "data");
      await d.decide("answerer", threadId, data.interruptId, { decision: "approve" });
      return one(d, threadId, "wait_timer");
    },
    facts: {
      also: ["answerer"],
      decidedSinceStart: true,
      earlier: "sibling_review",
      approvedBy: ["supervisor", "answerer"],
    },
  },
  {
    name: "goodwill: the voucher",
    agent: "goodwill",
    action: "goodwill_voucher",
    node: "ask",
    message: "Late again! Third time this year.",
    withOrder: true,
    absent: { answerer: "the agent asks one question" },
    rest: (d, threadId) =>
      editedAt(d, threadId, "goodwill_voucher", { complaint: "Late again, and the box was open." }),
    facts: { also: ["editor"], decidedSinceStart: false },
  },
];

/** A concrete answer of `kind` to `payload` (fast-check picks the free parts). */
function answerOf(kind: string, payload: Record<string, unknown>, rng: Rng | null): unknown {
  const pickInt = (min: number, max: number) => (rng ? rng.nextInt(min, max) : min);
  switch (kind) {
    case "approve":
      return { decision: "approve" };
    case "approve_partial": {
      const left = ((payload.remaining as { amountCents?: number } | undefined)?.amountCents ??
        (payload.requested as { amountCents: number }).amountCents) as number;
      return {
        decision: "approve_partial",
        amountCents: pickInt(1, Math.max(1, left - 1)),
        note: "Part of it.",
      };
    }
    case "reject":
      return { decision: "reject", note: "Not covered." };
    case "send":
      return { choice: "send" };
    case "send_edited":
      return { choice: "send_edited", subject: "Your request", body: "Edited by a person." };
    case "dont_send":
      return { choice: "dont_send", note: "I will call them." };
    case "grant":
      return { decision: "grant" };
    case "decline":
      return { decision: "decline", note: "Not this time." };
    case "option": {
      const options = (payload.options as { id: string }[]).map((o) => o.id);
      return { optionId: options[pickInt(0, options.length - 1)] };
    }
    case "text":
      return { text: "ORD-1004" };
    case "fire":
      return { outcome: "fired" };
    case "cancel":
      return { outcome: "cancelled", note: "The customer called: not them." };
    default:
      throw new Error(`no answer of kind ${kind}`);
  }
}

describe("one decision policy for every principal (generated over the registry)", () => {
  // Payout changes wait an hour after both reviews (the cooling-off timer is a question of its own here).
  const ctx = useTestServer("policymx", undefined, { ACCOUNT_CHANGE_COOLOFF_MS: "3600000" });
  const {
    people,
    as,
    settle,
    driver,
    counts,
    attempt: attemptAs,
    effectsSettled,
    ids,
  } = decisionHarness(ctx);
  let orders = 0;

  /** A new order above the auto-approval limit (€50): above the supervisor threshold (€500) when `big`, else either. */
  async function newOrder(rng: Rng, method: OrderSpec["method"], big = false): Promise<OrderSpec> {
    orders += 1;
    const spec: OrderSpec = {
      id: `ORD-${8000 + orders}`,
      amountCents:
        !big && rng.nextInt(0, 1) === 0 ? rng.nextInt(6_000, 49_900) : rng.nextInt(50_100, 150_000),
      method,
    };
    await ctx.prepared.sql.rows(
      `INSERT INTO orders (id, customer_name, customer_email, amount_cents, currency, placed_at, payment_method, items, status)
       VALUES ($1, $2, $3, $4, 'EUR', now() - interval '3 days', $5,
         jsonb_build_array(jsonb_build_object('sku', 'MX-1', 'name', 'Matrix item', 'quantity', 1, 'unitCents', $4::int)),
         'delivered')`,
      [spec.id, `Customer ${orders}`, `customer${orders}.mx@example.com`, spec.amountCents, method],
    );
    return spec;
  }

  /**
   * What the thread told its customer (its emails and the agent's replies) that no recorded effect backs: each claim a
   * reply can make, with the record it needs. Waits for the thread's effects to finish delivering first (an applied
   * account change queues its email only then).
   */
  async function unbackedClaims(threadId: string): Promise<string[]> {
    await effectsSettled(threadId);
    const view = await (await as("admin", `/api/threads/${threadId}`)).json();
    const replies = (view.messages as { role: string; content?: unknown }[])
      .filter((m) => m.role === "assistant" && typeof m.content === "string")
      .map((m) => String(m.content));
    const emails = await emailBodies(ctx.prepared.sql, threadId);
    const count = (table: string, where: string) => ctx.prepared.sql.count(table, where, [threadId]);
    const CLAIMS: { says: RegExp; backed: () => Promise<boolean> }[] = [
      {
        says: /approved (?:a partial refund|your refund) of|goes back to your original payment method|added to your account as store credit|store credit of .* queued/i,
        backed: async () => (await count("refunds", "thread_id = $1")) > 0,
      },
      {
        says: /has been updated/i,
        backed: async () =>
          (await count("effects", "thread_id = $1 AND kind = 'account_update' AND status = 'delivered'")) > 0,
      },
      {
        says: /being applied to your account/i,
        backed: async () => (await count("account_changes", "thread_id = $1")) > 0,
      },
      { says: /voucher worth/i, backed: async () => (await count("vouchers", "thread_id = $1")) > 0 },
    ];
    const unbacked: string[] = [];
    for (const text of [...replies, ...emails]) {
      for (const claim of CLAIMS) {
        if (claim.says.test(text) && !(await claim.backed())) unbacked.push(text.slice(0, 160));
      }
      for (const code of text.match(/\bGW-[A-Z2-9]{8}\b/g) ?? []) {
        const found = await ctx.prepared.sql.count("vouchers", "thread_id = $1 AND code = $2", [
          threadId,
          code,
        ]);
        if (found === 0) unbacked.push(`voucher code ${code} is not recorded`);
      }
    }
    return unbacked;
  }

  /** Answer as `kind` through `route`: the status, and the refusal code if any. */
  const attempt = (reached: Reached, kind: Kind, answerKind: string, answer: unknown, route: Route) =>
    attemptAs(
      { threadId: reached.threadId, interruptId: reached.interruptId, action: reached.story.action },
      kind,
      BULK_VERB[answerKind] ?? "approve",
      answer,
      route,
    );

  /** The routes an answer of `kind` by `kind` goes through. */
  function routesFor(story: Story, kind: Kind, answerKind: string): ("runs" | "decision" | "bulk" | "sla")[] {
    if (kind === "system_expiry") return ["sla"];
    if (kind === "bulk") return ["bulk"];
    const bulkToo = isBulkAction(story.action) && BULK_VERB[answerKind] ? (["bulk"] as const) : [];
    return ["runs", "decision", ...bulkToo];
  }

  const seen = new Map<string, Set<string>>(); // policy code → routes it came through

  it("every registered agent the generated suite does not cover, and every question it asks, has a scenario", () => {
    for (const agent of listAgents().filter((a) => !generatedSuitesCover(a))) {
      const nodes = new Set(SCENARIOS.filter((s) => s.agent === agent.id).map((s) => s.node));
      // lookup_order re-asks through ask_order's contract (the identity check) — a node of its own in the list.
      const asked = [...agent.interruptNodes].filter((n) => !nodes.has(n));
      expect(asked, `${agent.id}: questions without a scenario`).toEqual([]);
    }
  });

  for (const scenario of SCENARIOS) {
    it(`${scenario.name}: every refusal through every route, every accepted answer taken`, async () => {
      await people();
      const answers = ANSWERS[scenario.action]!;
      const rng = seeded(27 + SCENARIOS.indexOf(scenario));
      const method = scenario.node === "choose_method" ? "bank_transfer" : "card";
      const reached = await reach(scenario, driver, await newOrder(rng, method, true));
      expect(reached.story.node).toBe(scenario.node);
      const combos = KINDS.filter((k) => !scenario.absent[k]).flatMap((kind) =>
        answers
          // A bulk request says approve or reject: the answers it cannot express are not a bulk's to give.
          .filter((a) => kind !== "bulk" || !isBulkAction(scenario.action) || BULK_VERB[a])
          .map((a) => ({ kind, answer: a, outcome: expected(reached.story, kind, a) })),
      );
      const refused = combos.filter((c) => !c.outcome.ok);
      const accepted = combos.filter((c) => c.outcome.ok);

      // Before the click: what the thread page says each person may do matches the policy for the acting answer.
      const actingAnswer = answers.find((a) => ACTING.has(a));
      for (const person of Object.keys(PEOPLE) as Person[]) {
        if (scenario.absent[person]) continue;
        const view = await (await as(person, `/api/threads/${reached.threadId}`)).json();
        const verdict = (view.mayDecide as { interruptId: string; may: boolean; code?: string }[]).find(
          (v) => v.interruptId === reached.interruptId,
        );
        const want = actingAnswer
          ? expected(reached.story, person, actingAnswer)
          : expected(reached.story, person, answers[0]!);
        expect(verdict, `${person} verdict`).toMatchObject(
          want.ok ? { may: true } : { may: false, code: want.code },
        );
      }

      // Every refusal, through every route: the policy's code, and not one row written anywhere. First the effects
      // already recorded (a payment approved on the way here) finish delivering: the dispatcher writes those rows.
      await effectsSettled(reached.threadId);
      const before = await counts();
      const printed = await threadPrint(ctx.prepared.sql.rows, reached.threadId);
      for (const c of refused) {
        for (const route of routesFor(reached.story, c.kind, c.answer)) {
          const answer = answerOf(c.answer, reached.payload, rng);
          const got = await attempt(reached, c.kind, c.answer, answer, route);
          const want = c.outcome as Extract<Outcome, { ok: false }>;
          expectRefused(got, want, route, `${c.kind} ${c.answer} via ${route}`, seen);
        }
      }
      expect(await counts(), "rows written by refusals").toBe(before);
      expect(await threadPrint(ctx.prepared.sql.rows, reached.threadId)).toBe(printed);

      // Every accepted answer, each on a fresh thread brought the same way (the free parts of the answer, the order's
      // amount and the route generated from the scenario's seed).
      for (const c of accepted) {
        const fresh =
          c.kind === "system_expiry" ? reached : await reach(scenario, driver, await newOrder(rng, method));
        const routes = routesFor(fresh.story, c.kind, c.answer);
        const route = routes[rng.nextInt(0, routes.length - 1)]!;
        const got = await attempt(fresh, c.kind, c.answer, answerOf(c.answer, fresh.payload, rng), route);
        const label = `${c.kind} ${c.answer} via ${route}`;
        expect(got, label).toMatchObject({ taken: true, code: null });
        if (route !== "sla") {
          await settle(fresh.threadId);
          const who: Person = c.kind === "bulk" ? "filer" : (c.kind as Person);
          const [row] = await ctx.prepared.sql.rows<{ status: string; resolved_by_id: string | null }>(
            "SELECT status, resolved_by_id FROM decisions WHERE interrupt_id = $1",
            [fresh.interruptId],
          );
          expect(row?.status, label).toBe("resolved");
          if (ids.has(who)) expect(row?.resolved_by_id, label).toBe(ids.get(who));
          // Whatever the answer led to, the customer is told only of effects that are recorded.
          expect(await unbackedClaims(fresh.threadId), `${label}: claims without an effect`).toEqual([]);
        }
      }
      console.info(
        `[policy matrix] ${scenario.name}: ${combos.length} combinations, ${refused.length} refused (all tried), ${accepted.length} accepted (all taken)`,
      );
    });
  }

  it("every code the policies raise came back through every route that takes the answer", () => {
    const perRoute = Object.fromEntries([...seen].map(([code, routes]) => [code, [...routes].sort()]));
    expect(perRoute).toMatchObject({
      "forbidden:role": ["bulk", "decision", "runs"],
      "forbidden:four_eyes_own_thread": ["bulk", "decision", "runs"],
      "forbidden:four_eyes_supervisor": ["bulk", "decision", "runs"],
      "forbidden:four_eyes_edited": ["bulk", "decision", "runs"],
      "forbidden:review_role": ["bulk", "decision", "runs"],
      "forbidden:four_eyes_both_reviews": ["bulk", "decision", "runs"],
      "unprocessable:sla_acting_answer": ["sla"],
      "unprocessable:bulk_action": ["bulk"],
    });
  });
});
