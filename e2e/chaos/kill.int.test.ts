import { FAULT_MIX, runChaos } from "./harness";

/**
 * The fast variant of the kill and fault runs (`npm run test:chaos` runs ≥ 50 kills, `npm run test:faults` the full
 * fault mix): SIGKILLs while the fake payment provider and the SMTP server inject faults into every delivery.
 */
describe("kill test", () => {
  it("finishes every run after 6 SIGKILLs under delivery faults; every authorized effect reaches its provider once", async () => {
    const summary = await runChaos({ kills: 6, threads: 6, faults: FAULT_MIX });
    expect(summary.kills).toBe(6);
    expect(summary.completed).toBe(summary.threads);
    expect(summary, JSON.stringify(summary)).toMatchObject({
      failed_runs: 0,
      double_refunds: 0,
      missing_refunds: 0,
      double_emails: 0,
      lost_events: 0,
      invalid_event_logs: 0,
      duplicates_at_provider: 0,
      missing_unflagged: 0,
      missing_refunds_at_provider: 0,
      unauthorized_at_provider: 0,
      undelivered_effects: 0,
    });
    // Each ticket: one approved refund and one sent email, counted at the provider and the SMTP server. An email the
    // server was killed while handing over is the one exception, and it is flagged unconfirmed, never lost silently.
    expect(summary.effects).toBe(2 * summary.threads);
    expect(summary.missing).toBeLessThanOrEqual(summary.unconfirmed_effects);
    expect(summary.recovered_runs).toBeGreaterThan(0);
  }, 240_000);
});
