/**
 * `npm run prune [-- --dry-run] [--step history|events|archive]`: apply the retention policy (lib/runtime/
 * retention-policy.ts, configured by RETENTION_* in the environment) — truncate finished threads' histories, compact
 * finished runs' event logs, archive and delete old finished threads — in DATABASE_URL, or in the embedded database
 * when it is unset. Prints one line per step; the last line is the report as one JSON object.
 *
 * `npm run prune -- --keep-latest N --older-than D [--dry-run] [--include-unregistered] [--batch N]`: only delete
 * abandoned branches of inactive threads (rules in lib/runtime/retention/retention.ts). D is a duration: 90s, 15m, 2h, 30d.
 *
 * Both are audited and safe to interrupt and run again.
 */
import { openPglite, openPostgres } from "@/lib/db/open";
import { recordAudit } from "@/lib/db/queries/audit";
import { env } from "@/lib/platform/env";
import { type PruneReport, pruneCheckpoints } from "@/lib/runtime/retention/retention";
import {
  applyRetention,
  defaultRetentionPolicy,
  RETENTION_STEPS,
  type RetentionStep,
  type RetentionStepReport,
} from "@/lib/runtime/retention/retention-policy";
import { readOption, usageExit } from "./cli";

const USAGE =
  "usage: npm run prune [-- --dry-run] [--step history|events|archive]   (the retention policy, RETENTION_*)" +
  "\n       npm run prune -- --keep-latest N --older-than D [--dry-run] [--include-unregistered] [--batch N]" +
  "\n  N ≥ 1 root checkpoints kept per thread (plus their ancestors); D like 90s, 15m, 2h, 30d";
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

function fail(message: string): never {
  return usageExit("prune", USAGE, message);
}
const option = (args: string[], name: string) => readOption(args, name, fail);

function parseArgs(args: string[]) {
  const known = new Set(["--keep-latest", "--older-than", "--dry-run", "--include-unregistered", "--batch"]);
  for (const arg of args) {
    if (arg.startsWith("--") && !known.has(arg)) fail(`unknown option ${arg}`);
  }
  const keep = option(args, "--keep-latest");
  const age = option(args, "--older-than");
  const batch = option(args, "--batch") ?? "500";
  if (!keep || !/^[1-9]\d{0,6}$/.test(keep)) fail("--keep-latest must be a whole number ≥ 1");
  const duration = age?.match(/^(\d{1,7})([smhd])$/);
  if (!duration) fail("--older-than must be a duration like 90s, 15m, 2h or 30d");
  if (!/^[1-9]\d{0,5}$/.test(batch)) fail("--batch must be a whole number ≥ 1");
  return {
    keepLatest: Number(keep),
    olderThanMs: Number(duration[1]) * UNIT_MS[duration[2] as keyof typeof UNIT_MS],
    dryRun: args.includes("--dry-run"),
    includeUnregistered: args.includes("--include-unregistered"),
    batchSize: Number(batch),
  };
}

function progressLine(r: PruneReport): string {
  return (
    `scanned ${r.threadsScanned} threads: ${r.threadsPruned} pruned, ${r.threadsSkippedActive} skipped (active), ` +
    `${r.threadsSkippedUnregistered} skipped (no thread row); deleted ${r.checkpointsDeleted} checkpoints, ` +
    `${r.writesDeleted} writes, ${r.blobsDeleted} blobs (${(r.bytesDeleted / 1e6).toFixed(1)} MB) in ` +
    `${(r.durationMs / 1000).toFixed(1)} s`
  );
}

const operator = process.env.USER ?? "unknown";
const actor = { id: `system:prune-cli:${operator}`, label: `prune command (${operator})`, role: null };
const argv = process.argv.slice(2);
const legacy = argv.includes("--keep-latest") || argv.includes("--older-than");

function parsePolicyArgs(args: string[]) {
  for (const arg of args) {
    if (arg.startsWith("--") && arg !== "--dry-run" && arg !== "--step") fail(`unknown option ${arg}`);
  }
  const step = option(args, "--step");
  if (step !== undefined && !RETENTION_STEPS.includes(step as RetentionStep)) {
    fail("--step must be history, events or archive");
  }
  return { dryRun: args.includes("--dry-run"), steps: step ? [step as RetentionStep] : RETENTION_STEPS };
}

function stepLine(r: RetentionStepReport): string {
  return (
    `${r.step}: scanned ${r.threadsScanned} threads, changed ${r.threadsChanged}, skipped ${r.threadsSkipped}; ` +
    `deleted ${r.checkpointsDeleted} checkpoints, ${r.writesDeleted} writes, ${r.blobsDeleted} blobs, ` +
    `${r.eventsDeleted} events; ${r.rootsMarked} truncated roots; archived ${r.threadsArchived}` +
    `${r.archiveFile ? ` to ${r.archiveFile}` : ""} in ${(r.durationMs / 1000).toFixed(1)} s`
  );
}

const legacyOptions = legacy ? parseArgs(argv) : undefined;
const policyOptions = legacy ? undefined : parsePolicyArgs(argv);
const database = env.DATABASE_URL
  ? openPostgres(env.DATABASE_URL, { max: 2, pooled: env.DATABASE_POOLER === "transaction" })
  : await openPglite(env.PGLITE_DATA_DIR);
try {
  if (policyOptions) {
    const policy = defaultRetentionPolicy();
    console.log(
      `retention (${database.kind}${policyOptions.dryRun ? ", dry run" : ""}): ${JSON.stringify(policy)}`,
    );
    const report = await applyRetention({
      db: database.db,
      policy,
      actor,
      ...policyOptions,
      onStep: (r) => console.log(stepLine(r)),
    });
    console.log(JSON.stringify(report));
  } else if (legacyOptions) {
    const options = legacyOptions;
    console.log(
      `prune (${database.kind}${options.dryRun ? ", dry run" : ""}): keep the latest ${options.keepLatest} ` +
        `checkpoints per thread and everything younger than ${options.olderThanMs / 1000} s, with their ancestors`,
    );
    const report = await pruneCheckpoints({
      db: database.db,
      ...options,
      onProgress: (r) => console.log(progressLine(r)),
    });
    if (!report.dryRun) {
      await recordAudit({ db: database.db, entries: [{ action: "prune", actor, detail: { ...report } }] });
    }
    console.log(JSON.stringify(report));
  }
} finally {
  await database.close();
}
