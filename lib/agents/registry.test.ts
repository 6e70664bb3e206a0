import "@/lib/agents/index";
import { forkFields } from "@/components/history/fork-schema";
import { summarizeAnswer } from "@/components/thread/answer-summary";
import { actionLabel } from "@/components/ui/action-label";
import { errorCodeOf } from "@/lib/contract/errors";
import { parseInterruptPayload, validateAnswer } from "@/lib/contract/questions";
import { INTERRUPT_ACTIONS } from "@/lib/contract/questions/contract";
import { QUESTION_KINDS, questionKind } from "@/lib/contract/questions/kinds";
import type { Principal } from "@/lib/contract/roles";
import { bulkAnswer, isBulkAction } from "@/lib/queue/bulk-answers";
import { listAgents } from "@/lib/runtime/agents/registry";
import { intakeJsonSchema, readTicket } from "@/lib/runtime/runs/intake";

/*
 * The registry's completeness, generated over every registered agent and every kind of question it says it asks:
 * each place the console speaks about a question (label, ledger summary, bulk answers, the deadline settings' answer
 * shape, the pre-click policy check) has something true to say for it. A new agent, or a new kind, is covered here
 * without a case of its own; one left undefined fails here instead of leaving a place silently incomplete.
 */

const nobody: Principal = { kind: "user", id: "u-registry", label: "someone@x", role: "supervisor" };
const cases = listAgents().flatMap((agent) => agent.asks.map((action) => [agent.id, action, agent] as const));

describe("every registered agent's questions are complete in the console", () => {
  it("every agent says what it asks, and asks at least one thing", () => {
    for (const agent of listAgents()) expect(agent.asks.length, agent.id).toBeGreaterThan(0);
    expect(cases.length).toBeGreaterThan(0);
  });

  it.each(cases)(
    "%s asks %s: label, example, acting answer, summary, bulk, deadline shape, policy",
    (_id, action, agent) => {
      const kind = questionKind(action);
      expect(kind, `${action} has no entry in QUESTION_KINDS`).toBeDefined();
      if (!kind) return;
      // A label people read, not the raw action.
      expect(actionLabel(action)).not.toBe(action);
      expect(actionLabel(action).length).toBeGreaterThan(0);
      // The example is a question of this kind, and the agent's contract reads it as one.
      const parsed = parseInterruptPayload(kind.example);
      expect(parsed.ok && parsed.payload.action).toBe(action);
      const read = agent.interrupts.parse(kind.example);
      expect(read.ok && read.action).toBe(action);
      if (!read.ok) return;

      const acting = kind.actingAnswer(kind.example as never);
      if (acting !== null) {
        // The answer that acts is a valid answer, the agent agrees that it acts, and the ledger has words for it.
        expect(validateAnswer(kind.example, acting)).toMatchObject({ ok: true });
        expect(agent.actsOnIt(read.payload, acting), `${agent.id}: actsOnIt(${action}, acting answer)`).toBe(
          true,
        );
        expect(kind.summarize(acting as Record<string, unknown>, "EUR", String)).not.toBeNull();
        expect(summarizeAnswer(action, acting)).not.toMatch(/see the history/);
        // The pre-click check: the policy decides for an uninvolved supervisor — allowed, or refused with a code.
        try {
          agent.policy({
            interruptId: "i-1",
            payload: read.payload,
            answer: acting,
            principal: nobody,
            involved: [],
            decided: [],
            siblings: [],
          });
        } catch (error) {
          expect(errorCodeOf(error), `${agent.id}: ${String(error)}`).toMatch(/^forbidden:/);
        }
      }
      // Bulk: either both verbs give an answer the contract takes (and the deadline settings accept its shape), or the
      // kind says it is decided one by one.
      expect(isBulkAction(action)).toBe(kind.bulk !== null);
      if (kind.bulk) {
        for (const verb of ["approve", "reject"] as const) {
          const answer = bulkAnswer(action, verb, "A note.");
          expect(validateAnswer(kind.example, answer), `${action} bulk ${verb}`).toMatchObject({ ok: true });
          expect(kind.answerShape.safeParse(answer).success).toBe(true);
          expect(summarizeAnswer(action, answer)).not.toMatch(/see the history/);
        }
        expect(agent.actsOnIt(read.payload, bulkAnswer(action, "reject", "A note."))).toBe(false);
      }
      // "Answer differently": the form opens on the other way — after the answer that acts, the one that refuses;
      // after a refusal, the one that goes ahead; after a choice, another option. Free text has no other way.
      const other = (answer: unknown) =>
        kind.otherWay(read.payload as never, answer as Record<string, unknown>);
      if (acting !== null) expect(other(acting)?.verb, `${action}: after the acting answer`).toBe("reject");
      if (kind.bulk) expect(other(bulkAnswer(action, "reject", "A note."))?.verb).toBe("approve");
      if (action === "select_option" && kind.example.action === "select_option") {
        for (const option of kind.example.options)
          expect(other({ optionId: option.id })?.optionId).not.toBe(option.id);
      }
      if (action === "input_text") expect(other({ text: "x" })).toBeNull();
    },
  );

  it("every kind of the contract has an entry (the mapped type says so too) and is asked by some agent or kept on purpose", () => {
    expect(Object.keys(QUESTION_KINDS).sort()).toEqual([...INTERRUPT_ACTIONS].sort());
    const asked = new Set(cases.map(([, action]) => action));
    expect(INTERRUPT_ACTIONS.filter((a) => !asked.has(a))).toEqual([]);
  });
});

describe("every registered agent's ticket is its own, and complete", () => {
  it.each(listAgents().map((agent) => [agent.id, agent] as const))(
    "%s: a message, unknown fields refused, every field drawn on the form, a ticket of only a message read",
    (_id, agent) => {
      const schema = intakeJsonSchema(agent);
      const properties = (schema.properties ?? {}) as Record<string, { type?: string }>;
      // The console's one fixed field: the customer's words, required, text.
      expect(properties.message?.type).toBe("string");
      expect(schema.required).toContain("message");
      // A misspelt field is refused rather than silently dropped.
      expect(schema.additionalProperties).toBe(false);
      // The new-ticket form draws every field from the schema: none is left off it.
      expect(
        forkFields(schema)
          .map((f) => f.name)
          .sort(),
      ).toEqual(Object.keys(properties).sort());
      // Fields other than the message are optional or defaulted unless the form can ask for them; a message alone
      // is a ticket when nothing else is required, and the order it names (if any) is text or null.
      const others = ((schema.required as string[]) ?? []).filter((f) => f !== "message");
      if (others.length === 0) {
        const read = readTicket(agent, { message: "  Where is my parcel?  " });
        expect(read.message).toBe("Where is my parcel?");
        expect(read.orderRef).toBeNull();
      }
      expect(() => readTicket(agent, { message: "hi", surprise: 1 })).toThrow(/surprise/);
    },
  );
});
