import fc from "fast-check";
import { QUESTION_KINDS } from "./kinds";
import {
  encodeDecisions,
  type ReviewDecision,
  readStandardInterrupt,
  reviewDecisions,
  sentBackToModel,
  type ToolReviewPayload,
  toolReviewActs,
} from "./tool-review";
import { parseInterruptPayload, validateAnswer } from "./validate";

/* The standard interrupts read as tool reviews, and every answer checked against the request: generated, hostile. */

const argsSchema = {
  type: "object",
  properties: {
    orderId: { type: "string", minLength: 1 },
    amountCents: { type: "integer", minimum: 100, maximum: 20000 },
  },
  required: ["orderId", "amountCents"],
  additionalProperties: false,
};

const langchainRequest = {
  actionRequests: [
    { name: "issue_store_credit", args: { orderId: "ORD-1", amountCents: 500 }, description: "Credit?" },
    { name: "send_note", args: { text: "hi" } },
  ],
  reviewConfigs: [
    { actionName: "issue_store_credit", allowedDecisions: ["approve", "edit", "reject"], argsSchema },
    { actionName: "send_note", allowedDecisions: ["approve", "reject"] },
  ],
};
const agentInboxRequest = [
  {
    action_request: { action: "send_reply", args: { body: "Hello" } },
    config: { allow_accept: true, allow_edit: true, allow_respond: true, allow_ignore: false },
    description: "Send it?",
  },
];

function payloadOf(raw: unknown): ToolReviewPayload {
  const parsed = parseInterruptPayload(raw);
  if (!parsed.ok || parsed.payload.action !== "tool_review") throw new Error("not a tool review");
  return parsed.payload;
}

describe("reading the standard interrupts", () => {
  it("reads LangChain's HITL request and agent-inbox's HumanInterrupt, and a read payload again as itself", () => {
    const lc = payloadOf(langchainRequest);
    expect(lc).toMatchObject({
      format: "langchain",
      title: "Review 2 tool calls: issue_store_credit, send_note",
      requests: [
        { name: "issue_store_credit", allowed: ["approve", "edit", "reject"], argsSchema },
        { name: "send_note", allowed: ["approve", "reject"] },
      ],
    });
    expect(payloadOf(lc)).toEqual(lc);
    expect(payloadOf(agentInboxRequest)).toMatchObject({
      format: "agent_inbox",
      requests: [{ name: "send_reply", allowed: ["approve", "edit", "respond"], description: "Send it?" }],
    });
    expect(readStandardInterrupt({ action: "refund_approval" })).toBeNull();
  });

  it("refuses a request whose calls allow nothing, or that has none", () => {
    expect(parseInterruptPayload({ actionRequests: [], reviewConfigs: [] }).ok).toBe(false);
    expect(parseInterruptPayload([{ action_request: { action: "x", args: {} }, config: {} }]).ok).toBe(false);
  });
});

const decision = fc.oneof(
  fc.record({ type: fc.constant("approve") }),
  fc.record({
    type: fc.constant("reject"),
    message: fc.option(fc.string({ maxLength: 40 }), { nil: undefined }),
  }),
  fc.record({
    type: fc.constant("edit"),
    editedAction: fc.record({
      name: fc.constantFrom("issue_store_credit", "send_note", "lookup_order"),
      args: fc.dictionary(
        fc.constantFrom("orderId", "amountCents", "extra", "text"),
        fc.oneof(fc.integer({ min: -1000, max: 100_000 }), fc.string({ maxLength: 8 }), fc.constant(null)),
      ),
    }),
  }),
  fc.anything(),
);

describe("answers to a tool review (generated)", () => {
  const payload = payloadOf(langchainRequest);

  it("an accepted answer has one allowed decision per call, edits keep the tool and fit its schema", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.record({ decisions: fc.array(decision, { maxLength: 4 }) }), fc.anything()),
        (answer) => {
          const check = validateAnswer(payload, answer);
          if (!check.ok) return;
          const decisions = reviewDecisions(check.answer);
          expect(decisions).toHaveLength(2);
          decisions.forEach((d, i) => {
            expect(payload.requests[i]!.allowed).toContain(d.type);
          });
          const raw = (check.answer as { decisions: { editedAction?: { name: string } }[] }).decisions;
          raw.forEach((d, i) => {
            if (d.editedAction) expect(d.editedAction.name).toBe(payload.requests[i]!.name);
          });
          const edit = decisions[0];
          if (edit?.type === "edit") {
            expect(typeof edit.args.orderId).toBe("string");
            expect(Number.isInteger(edit.args.amountCents)).toBe(true);
            expect(edit.args.amountCents as number).toBeGreaterThanOrEqual(100);
            expect(edit.args.amountCents as number).toBeLessThanOrEqual(20000);
            expect(Object.keys(edit.args).sort()).toEqual(["amountCents", "orderId"]);
          }
        },
      ),
      { numRuns: 500, seed: 30 },
    );
  });

  it("our decisions, encoded in either format, validate and read back the same", () => {
    const inbox = payloadOf(agentInboxRequest);
    const amount = fc.integer({ min: 100, max: 20000 });
    fc.assert(
      fc.property(
        fc.oneof(
          fc.constant<ReviewDecision>({ type: "approve" }),
          amount.map((a): ReviewDecision => ({ type: "edit", args: { orderId: "ORD-2", amountCents: a } })),
        ),
        fc.oneof(
          fc.constant<ReviewDecision>({ type: "approve" }),
          fc.constant<ReviewDecision>({ type: "reject", message: "No." }),
        ),
        fc.oneof(
          fc.constant<ReviewDecision>({ type: "approve" }),
          fc.constant<ReviewDecision>({ type: "respond", message: "Shorter, please." }),
          fc.constant<ReviewDecision>({ type: "edit", args: { body: "Hi!" } }),
        ),
        (first, second, reply) => {
          const lc = encodeDecisions(payload, [first, second]);
          expect(validateAnswer(payload, lc)).toMatchObject({ ok: true });
          expect(reviewDecisions(lc)).toEqual([first, second]);
          // LangChain runs none of a batch once one call is rejected: such an answer lets nothing run.
          expect(toolReviewActs(lc)).toBe(second.type !== "reject");
          expect(sentBackToModel(lc)).toBe(second.type === "reject");
          const ai = encodeDecisions(inbox, [reply]);
          expect(validateAnswer(inbox, ai)).toMatchObject({ ok: true });
          expect(reviewDecisions(ai)).toEqual([reply]);
        },
      ),
      { numRuns: 200, seed: 31 },
    );
  });

  it("says why in words: the field, the tool and the bound", () => {
    const check = validateAnswer(payload, {
      decisions: [
        {
          type: "edit",
          editedAction: { name: "issue_store_credit", args: { orderId: "ORD-1", amountCents: 50_000 } },
        },
        { type: "edit", editedAction: { name: "send_note", args: {} } },
      ],
    });
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.error).toContain("amount of issue_store_credit must be at most 200.00");
    expect(check.error).toContain("send_note may not be answered with edit");
  });
});

describe("agent-inbox's ignore", () => {
  const ignorable = payloadOf([
    {
      action_request: { action: "send_reply", args: { body: "Hello" } },
      config: { allow_accept: true, allow_edit: false, allow_respond: false, allow_ignore: true },
    },
  ]);

  it("is offered as what it is (ignore), not as a rejection the agent reads", () => {
    expect(ignorable.requests[0]?.allowed).toEqual(["approve", "ignore"]);
    expect(validateAnswer(ignorable, [{ type: "ignore", args: null }])).toMatchObject({ ok: true });
  });

  it("keeps the reviewer's note, whatever it says, in the answer the graph and the ledger get", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 2000 }), (note) => {
        const trimmed = note.trim();
        const answer = encodeDecisions(ignorable, [
          { type: "ignore", ...(trimmed ? { note: trimmed } : {}) },
        ]);
        expect(answer).toEqual([{ type: "ignore", args: trimmed || null }]);
        const checked = validateAnswer(ignorable, answer);
        expect(checked.ok).toBe(true);
        expect(reviewDecisions(answer)).toEqual([
          trimmed ? { type: "ignore", note: trimmed } : { type: "ignore" },
        ]);
        expect(toolReviewActs(answer)).toBe(false);
      }),
    );
  });

  it("an ignore is refused where the request does not allow it, and a note over 2,000 characters is refused", () => {
    expect(validateAnswer(payloadOf(agentInboxRequest), [{ type: "ignore", args: null }]).ok).toBe(false);
    expect(validateAnswer(ignorable, [{ type: "ignore", args: "x".repeat(2001) }]).ok).toBe(false);
  });
});

describe("an edit in the decision history (issue 53)", () => {
  const summarize = (answer: unknown) =>
    QUESTION_KINDS.tool_review.summarize(answer as Record<string, unknown>, "EUR", (v) => `“${String(v)}”`);

  it("says the edited arguments in words and money, never their JSON", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000 }), fc.string({ maxLength: 40 }), (cents, reason) => {
        const text = summarize({
          decisions: [
            {
              type: "edit",
              editedAction: {
                name: "issue_store_credit",
                args: { orderId: "ORD-2", amountCents: cents, reason },
              },
            },
          ],
        });
        const money = new Intl.NumberFormat("en-IE", { style: "currency", currency: "EUR" }).format(
          cents / 100,
        );
        expect(text).toBe(`Approved with edits: order id “ORD-2”, amount ${money}, reason “${reason}”`);
      }),
      { numRuns: 100, seed: 53 },
    );
  });
});
