import { runChaos } from "./harness";

/** The fast variant of the kill test (`npm run test:chaos` runs ≥ 50 kills). */
describe("kill test", () => {
  it("finishes every run after 6 SIGKILLs, with one refund per order, one email per thread and gap-free logs", async () => {
    const summary = await runChaos({ kills: 6, threads: 6 });
    expect(summary.kills).toBe(6);
    expect(summary.completed).toBe(summary.threads);
    expect(summary).toMatchObject({
      failed_runs: 0,
      double_refunds: 0,
      missing_refunds: 0,
      double_emails: 0,
      lost_events: 0,
      invalid_event_logs: 0,
    });
    expect(summary.recovered_runs).toBeGreaterThan(0);
  }, 240_000);
});
