/**
 * `npm run deploy:shadow -- --baseline <dir of the build serving now> [--sample N] [--thread <id>]… [--answer
 * approve|reject] [--json]`, run from the candidate build against DATABASE_URL (or the embedded database, with the
 * console stopped): every thread waiting for a person (or the N oldest) is continued as the candidate would continue
 * it and as the serving build would, each in a sandbox that writes nothing (lib/runtime/runs/shadow.ts), and the two
 * are compared per thread: same next question / question changed / amounts changed / effects changed / error. Prints
 * a line per thread and a summary, keeps the report for the admin page, and exits 1 when money or something a customer
 * sees would differ (0 otherwise, 2 on a usage error or when a build cannot be run).
 *
 * `--outcomes <file>` (what the command asks the serving build for): only write this build's outcomes there as JSON.
 */
import "@/lib/agents/index";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { AppError } from "@/lib/contract/errors";
import { type BulkVerb, questionKind } from "@/lib/contract/questions/kinds";
import { openPglite, openPostgres } from "@/lib/db/open";
import { insertShadowReport, listWaitingThreads } from "@/lib/db/queries/shadow-reports";
import { env } from "@/lib/platform/env";
import { verifyAgentVersions } from "@/lib/runtime/agents/verify-agents";
import { type ShadowOutcome, shadowThread } from "@/lib/runtime/runs/shadow";
import { judge, tally, VERDICT_WORDS, type Verdict } from "@/lib/runtime/runs/shadow-verdict";
import { readOption, usageExit } from "./cli";

const USAGE =
  "usage: npm run deploy:shadow -- --baseline <dir of the serving build> [--sample N] [--thread <id>]… [--answer approve|reject] [--json]";
const fail = (message: string): never => usageExit("deploy:shadow", USAGE, message);

const args = process.argv.slice(2);
const outcomesFile = readOption(args, "--outcomes", fail);
const baseline = readOption(args, "--baseline", fail);
const sampleText = readOption(args, "--sample", fail);
const answer = (readOption(args, "--answer", fail) ?? "approve") as BulkVerb;
const json = args.includes("--json");
const threadIds = args.flatMap((a, i) => (args[i - 1] === "--thread" ? [a] : []));
if (answer !== "approve" && answer !== "reject") fail(`--answer must be approve or reject, not ${answer}`);
const sample = sampleText === undefined ? undefined : Number(sampleText);
if (sample !== undefined && !(Number.isInteger(sample) && sample > 0))
  fail("--sample needs a whole number above 0");
if (!outcomesFile && !baseline)
  fail("--baseline is required: the directory of the build that serves the database now");
if (baseline && !existsSync(join(resolve(baseline), "scripts", "deploy-shadow.ts"))) {
  fail(
    `${baseline} has no scripts/deploy-shadow.ts: it is not a build of this console that knows the shadow`,
  );
}

const database = env.DATABASE_URL
  ? openPostgres(env.DATABASE_URL, { max: 2, pooled: env.DATABASE_POOLER === "transaction" })
  : await openPglite(env.PGLITE_DATA_DIR);
let exitCode = 0;
try {
  // This build's own start check: a version whose graph is not what it declares is refused here as at start.
  await verifyAgentVersions();
  const waiting = await listWaitingThreads({
    db: database.db,
    ...(threadIds.length > 0 ? { threadIds } : {}),
    ...(sample !== undefined ? { limit: sample } : {}),
  });
  if (outcomesFile) {
    writeFileSync(outcomesFile, JSON.stringify(await outcomesOf(waiting, "serving")));
  } else {
    exitCode = await compare(waiting.map((t) => t.id));
  }
} finally {
  await database.close();
}
process.exit(exitCode);

async function outcomesOf(threads: Awaited<ReturnType<typeof listWaitingThreads>>, label: string) {
  const outcomes: ShadowOutcome[] = [];
  for (const [i, thread] of threads.entries()) {
    outcomes.push(await shadowThread({ database, thread, answer: (d) => defaultAnswer(d, answer) }));
    console.error(`[shadow] ${label}: ${i + 1}/${threads.length} threads`);
  }
  return outcomes;
}

/** Outcomes of the serving build (in its own directory, on the same database) beside this build's; the report. */
async function compare(ids: string[]): Promise<number> {
  if (ids.length === 0) {
    console.log("deploy:shadow: no thread waits for a person; nothing to compare.");
  }
  const dir = mkdtempSync(join(tmpdir(), "deploy-shadow-"));
  const file = join(dir, "serving.json");
  const serving = resolve(baseline ?? "");
  try {
    const ran = spawnSync(
      join(serving, "node_modules", ".bin", "tsx"),
      [
        "--conditions=react-server",
        "scripts/deploy-shadow.ts",
        "--outcomes",
        file,
        "--answer",
        answer,
        ...ids.flatMap((id) => ["--thread", id]),
      ],
      { cwd: serving, env: process.env, stdio: ["ignore", "inherit", "inherit"] },
    );
    if (ran.status !== 0 || !existsSync(file)) {
      console.error(
        `deploy:shadow: the serving build in ${serving} could not replay the threads (exit ${ran.status})`,
      );
      return 2;
    }
    const before = new Map(
      (JSON.parse(readFileSync(file, "utf8")) as ShadowOutcome[]).map((o) => [o.threadId, o]),
    );
    const threads = await listWaitingThreads({ db: database.db, threadIds: ids });
    const after = await outcomesOf(threads, "candidate");
    const verdicts = after.flatMap((o) => {
      const b = before.get(o.threadId);
      return b ? [judge(b, o)] : [];
    });
    const summary = tally(verdicts);
    const code = verdicts.some((v) => v.consequential) ? 1 : 0;
    for (const v of verdicts) {
      console.log(`${VERDICT_WORDS[v.verdict].padEnd(18)} ${v.threadId} ${v.agent} ${v.versions}`);
      for (const d of v.details) console.log(`    ${d}`);
    }
    const words = (Object.entries(summary) as [Verdict, number][])
      .filter(([, n]) => n > 0)
      .map(([verdict, n]) => `${n} ${VERDICT_WORDS[verdict]}`);
    console.log(
      `deploy:shadow: ${verdicts.length} thread(s): ${words.join(", ") || "none"} — ${code === 0 ? "nothing money or a customer sees would differ" : "money or what a customer sees would differ: do not switch"}`,
    );
    await insertShadowReport({
      db: database.db,
      report: { candidate: process.cwd(), baseline: serving, exitCode: code, summary, threads: verdicts },
    });
    if (json) console.log(JSON.stringify({ exitCode: code, summary, threads: verdicts }));
    return code;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The answer the shadow gives a question: its kind's acting answer (or bulk answer), else its first option. */
function defaultAnswer(decision: { action: string; payload: unknown }, verb: BulkVerb): unknown {
  const kind = questionKind(decision.action);
  const payload = decision.payload as never;
  if (verb === "approve") {
    const acting = kind?.actingAnswer(payload);
    if (acting) return acting;
  }
  const bulk = kind?.bulk?.(verb, verb === "reject" ? "Rejected by the deploy shadow." : undefined);
  if (bulk !== undefined && bulk !== null) return bulk;
  const options = (decision.payload as { options?: { id: string }[] } | null)?.options;
  if (options?.[0]) return { optionId: options[0].id };
  throw new AppError(
    "unprocessable:shadow_answer",
    `The shadow has no default answer for a ${decision.action} question: it needs a person's words.`,
  );
}
