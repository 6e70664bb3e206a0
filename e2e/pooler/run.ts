/**
 * `npm run test:pooler` (also a step of `npm test`): production behind a pooler. Starts Debian's PgBouncer in
 * transaction mode in front of the test Postgres, then runs the HTTP suites — flows, races, durability and recovery
 * (kills and restarts mid-run), the account change killed mid-effect, the live inbox and the streams — with every test
 * server's DATABASE_URL through the pooler, DATABASE_POOLER=transaction and a direct DATABASE_LISTEN_URL. At the end
 * the pooler's own statistics must show the servers' transactions went through it: a run that quietly connected
 * directly fails.
 *
 *   npm run test:pooler                      the suites below
 *   npm run test:pooler -- e2e/api/x.int.test.ts   others
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { startPooler } from "../support/pooler";

const SUITES = [
  "e2e/api/flows.int.test.ts",
  "e2e/api/races.int.test.ts",
  "e2e/api/durability.int.test.ts",
  "e2e/api/recovery.int.test.ts",
  "e2e/api/account-kill.int.test.ts",
  "e2e/api/inbox-stream.int.test.ts",
  "e2e/pooler/pooler.int.test.ts",
];

async function main(): Promise<number> {
  const files = process.argv.slice(2).filter((a) => a.endsWith(".ts"));
  const pooler = await startPooler();
  console.log(`pooler: PgBouncer (transaction mode) on 127.0.0.1:${pooler.port}`);
  try {
    const code = await new Promise<number>((resolve) => {
      const child = spawn(
        join(process.cwd(), "node_modules", ".bin", "vitest"),
        [
          "run",
          "--project",
          "int",
          // npm test counts this run's tests from its own report.
          ...(process.env.POOLER_REPORT
            ? ["--reporter=default", "--reporter=json", `--outputFile.json=${process.env.POOLER_REPORT}`]
            : []),
          ...(files.length > 0 ? files : SUITES),
        ],
        { stdio: "inherit", env: { ...process.env, TEST_POOLER_PORT: String(pooler.port) } },
      );
      child.once("exit", (c) => resolve(c ?? 1));
    });
    const stats = (await pooler.stats()).filter((s) => s.database !== "pgbouncer");
    const transactions = stats.reduce((sum, s) => sum + s.transactions, 0);
    const databases = stats.filter((s) => s.transactions > 0).length;
    console.log(`pooler: ${transactions} transactions on ${databases} test databases went through PgBouncer`);
    if (transactions === 0) {
      console.error("pooler: no transaction went through the pooler — the servers connected directly");
      return 1;
    }
    return code;
  } finally {
    await pooler.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
