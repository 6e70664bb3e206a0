import type { EffectView } from "@/lib/wire";
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
