/**
 * `npm run test:failover [-- --failovers N --threads M]`: faults below the app under load (e2e/failover/harness.ts) —
 * the database failing over to its synchronous standby N times (default 5), PgBouncer restarted twice, the database
 * out of connections, a row lock that never returns. Prints progress, one JSON line per scenario with its figures,
 * and a last line `N passed, N failed` counting the scenarios; exits 1 if any invariant broke.
 */
// First: the data keys this process shares with the servers it starts (set before anything reads the settings).
import "../support/auth";
import { writeFileSync } from "node:fs";
import {
  exhaustionUnderLoad,
  failoverUnderLoad,
  invariantsHold,
  lockedRow,
  lockedRowHolds,
  poolerRestartUnderLoad,
} from "./harness";

const args = process.argv.slice(2);
const arg = (name: string, fallback: number) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const threads = arg("--threads", 8);
// `--only failover|pooler|exhaustion|lock`: one scenario.
const only = args.includes("--only") ? args[args.indexOf("--only") + 1] : undefined;
const runs = (name: string) => only === undefined || only === name;
const log = (line: string) => console.log(`[failover] ${line}`);
let passed = 0;
let failed = 0;
const scenarios: object[] = [];
const report = (scenario: string, figures: object, broken: string[]) => {
  const line = { scenario, ok: broken.length === 0, broken, ...figures };
  console.log(JSON.stringify(line));
  scenarios.push(line);
  if (broken.length === 0) passed += 1;
  else failed += 1;
};

if (runs("failover")) {
  const failover = await failoverUnderLoad({ times: arg("--failovers", 5), threads, log });
  const tabs =
    failover.reconnected_tabs_whole === failover.reconnected_tabs && failover.reconnected_tabs > 0
      ? []
      : [
          `${failover.reconnected_tabs - failover.reconnected_tabs_whole} of ${failover.reconnected_tabs} tabs did not get the whole log back by seq`,
        ];
  report("failover", failover, [...invariantsHold(failover), ...tabs]);
}
if (runs("pooler")) {
  const pooler = await poolerRestartUnderLoad({ times: 2, threads, log });
  report("pooler restart", pooler, invariantsHold(pooler));
}
if (runs("exhaustion")) {
  const exhaustion = await exhaustionUnderLoad({ threads, log });
  report("connection exhaustion", exhaustion, invariantsHold(exhaustion));
}
if (runs("lock")) {
  const lock = await lockedRow({ log });
  report("locked row", lock, lockedRowHolds(lock));
}

console.log(`${passed} passed, ${failed} failed`);
// FAILOVER_REPORT: where `npm test` reads the counts (and each scenario's figures) from.
if (process.env.FAILOVER_REPORT) {
  writeFileSync(process.env.FAILOVER_REPORT, JSON.stringify({ passed, failed, scenarios }, null, 2));
}
process.exit(failed === 0 ? 0 : 1);
