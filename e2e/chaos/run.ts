/**
 * `npm run test:chaos [-- --kills N --threads M]`: the long kill test (default 50 kills). Prints progress, then one
 * JSON summary line last; exits 1 if any invariant broke.
 */
import { runChaos } from "./harness";

const args = process.argv.slice(2);
const arg = (name: string, fallback: number) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const summary = await runChaos({
  kills: arg("--kills", 50),
  threads: arg("--threads", 30),
  log: console.log,
});
const ok =
  summary.completed === summary.threads &&
  summary.failed_runs === 0 &&
  summary.double_refunds === 0 &&
  summary.missing_refunds === 0 &&
  summary.double_emails === 0 &&
  summary.lost_events === 0 &&
  summary.invalid_event_logs === 0;
console.log(JSON.stringify(summary));
process.exit(ok ? 0 : 1);
