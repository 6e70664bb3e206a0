import type { EffectTaskAction, EffectView } from "@/lib/contract/wire";
import { isStanding, ledgerOutcome } from "./ledger-outcome";

const email = (status: EffectView["status"]): EffectView => ({
  id: `e-${status}`,
  kind: "email",
  idempotencyKey: `k-${status}`,
  recordId: "r-1",
  status,
  attempts: 1,
  lastError: null,
  providerRef: null,
  simulated: false,
  summary: "Email “Your refund” to ada@example.com",
  createdAt: new Date(0).toISOString(),
  nextAttemptAt: null,
  deliveredAt: null,
  task: null,
});

describe("the ledger's outcome with an unconfirmed email", () => {
  it("counts it as possibly sent, and says so rather than 'was sent' or 'is on its way'", () => {
    expect(isStanding(email("unconfirmed"))).toBe(true);
    const sentences = (status: EffectView["status"]) =>
      ledgerOutcome({}, [email(status)]).contradictions.map((c) => c.text);
    expect(sentences("unconfirmed")).toEqual([
      expect.stringContaining("may have been sent from another branch"),
    ]);
    expect(sentences("delivered")).toEqual([expect.stringContaining("was sent from another branch")]);
    expect(sentences("queued")).toEqual([expect.stringContaining("is on its way")]);
  });
});

describe("the ledger's outcome with a closed email task", () => {
  const closed = (resolution: EffectTaskAction): EffectView => ({
    ...email("handled"),
    task: { open: false, actions: [], resolution, resolvedBy: "olga@example.com", resolvedAt: null },
  });

  it("counts an email confirmed to have arrived as sent, and one closed otherwise as not sent", () => {
    expect(isStanding(closed("confirmed_delivered"))).toBe(true);
    expect(ledgerOutcome({}, [closed("confirmed_delivered")]).contradictions.map((c) => c.text)).toEqual([
      expect.stringContaining("was sent from another branch"),
    ]);
    expect(isStanding(closed("mark_handled"))).toBe(false);
    expect(ledgerOutcome({}, [closed("mark_handled")]).contradictions).toEqual([]);
  });
});

describe("an effect named by the branch's conversation (a tool's result)", () => {
  const payment: EffectView = {
    ...email("delivered"),
    id: "5f0c9a52-0d7e-4a43-9a43-2f6f0d1b7e11",
    kind: "payment",
    summary: "Refund €2.00 for ORD-1001",
  };
  const toolResult = [
    { role: "tool", content: JSON.stringify({ recorded: true, effectId: payment.id, status: "queued" }) },
  ];

  it("is this branch's, so nothing disagrees", () => {
    const outcome = ledgerOutcome({}, [payment], toolResult);
    expect(outcome.lines.map((l) => l.onThisBranch)).toEqual([true]);
    expect(outcome.contradictions).toEqual([]);
  });

  it("is another branch's when the branch does not name it (a fork from before the tool ran)", () => {
    expect(ledgerOutcome({}, [payment], []).contradictions).toHaveLength(1);
  });
});

describe("a thread that was never forked", () => {
  const paid: EffectView = {
    ...email("delivered"),
    id: "pay-1",
    kind: "payment",
    summary: "Refund €2.00 for ORD-1",
  };

  it("raises no disagreement: an effect its state does not name was made earlier or later on its one line", () => {
    expect(ledgerOutcome({}, [paid], [], { forked: false }).contradictions).toEqual([]);
    // The same state on a forked thread: the payment may be another branch's, and the page says so.
    expect(ledgerOutcome({}, [paid], [], { forked: true }).contradictions).toHaveLength(1);
  });
});

describe("an effect's follow-up", () => {
  it("belongs to the line whose effect queued it (the email saying an account change is made), and only to it", () => {
    const change: EffectView = {
      ...email("delivered"),
      id: "e-change",
      kind: "account_update",
      recordId: "change-1",
      idempotencyKey: "account:change-1",
      summary: "Account change",
    };
    const followUp: EffectView = {
      ...email("delivered"),
      id: "e-told",
      idempotencyKey: "email:account-change/change-1",
    };
    const other: EffectView = {
      ...email("delivered"),
      id: "e-other",
      idempotencyKey: "email:account-change/change-2",
    };
    const line = (values: Record<string, unknown>) =>
      Object.fromEntries(
        ledgerOutcome(values, [change, followUp, other]).lines.map((l) => [l.effect.id, l.onThisBranch]),
      );
    expect(line({ outcome: { status: "applied", effectId: "e-change" } })).toEqual({
      "e-change": true,
      "e-told": true,
      "e-other": false,
    });
    // A branch that made no change has neither the change nor what it queued.
    expect(line({ outcome: { status: "rejected", effectId: null } })).toEqual({
      "e-change": false,
      "e-told": false,
      "e-other": false,
    });
  });
});
