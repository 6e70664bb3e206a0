import "server-only";
import "@/lib/agents/index";
import { ensureFirstAdmin, seedDemoUsers } from "@/lib/auth/bootstrap";
import { type AppDb, type Database, getDatabase } from "@/lib/db/client";
import { registerInstance } from "@/lib/db/queries/instances";
import { countOpenThreadsOn } from "@/lib/db/queries/threads";
import { startDispatcher } from "@/lib/delivery/dispatcher";
import { startReconcileSchedule } from "@/lib/delivery/reconcile-schedule";
import { dataKeys } from "@/lib/platform/data-keys";
import { env } from "@/lib/platform/env";
import { instanceId, instanceLabels } from "@/lib/platform/instance";
import { errorFields, logger } from "@/lib/platform/observability/logger";
import {
  backoff,
  reportReachable,
  reportUnreachable,
  runtimePhase,
  setRuntimePhase,
} from "@/lib/platform/status";
import { startDeadlines } from "@/lib/queue/deadlines";
import { hasAgent, listRefusedVersions } from "@/lib/runtime/agents/registry";
import { verifyAgentVersions } from "@/lib/runtime/agents/verify-agents";
import { startAuditChainer } from "@/lib/runtime/process/audit-chainer";
import { seedDemoThreads } from "@/lib/runtime/process/demo";
import { listenEmbedded, startEventListener } from "@/lib/runtime/process/listener";
import { startQueueSampler } from "@/lib/runtime/process/sampler";
import { installShutdownHandlers } from "@/lib/runtime/process/shutdown";
import { startRetentionSchedule } from "@/lib/runtime/retention/retention-schedule";
import { startRecovery } from "@/lib/runtime/runs/recovery";
import { seedDemoOrders } from "@/lib/shop/demo-orders";

/**
 * Server start-up: take over SIGTERM/SIGINT (drain before exit), then open and migrate the database, seed the demo
 * shop's orders, record this instance and start LISTEN and recovery (sweeper + heartbeat). When the database is not
 * reachable the server still starts — /api/health answers 503 `degraded` — and the start is retried in the background
 * with back-off (logged once, not per attempt) until it succeeds, so an instance booted before its database recovers
 * orphaned runs as soon as the database is there.
 */
export async function startServer(): Promise<void> {
  refuseImpliedSimulators();
  refuseMissingDataKeys();
  refuseUnknownMultitaskAgents();
  installShutdownHandlers();
  // Before anything can claim a run: a version whose graph is not what it declares never runs here.
  await verifyAgentVersions();
  if (await startRuntime()) return;
  // Retry no slower than the sweep interval: the database's return is noticed within one sweep.
  const delays = backoff({ initialMs: 250, maxMs: Math.min(5_000, env.RUN_SWEEP_INTERVAL_MS) });
  const retry = () => {
    setTimeout(async () => {
      if (!(await startRuntime())) retry();
    }, delays.next()).unref();
  };
  retry();
}

/**
 * Simulators are said, never implied: a deployment (DATABASE_URL) without a payment provider or a mail server would
 * pay and mail nothing while its pages said "Delivered". It does not start unless told the simulation is meant. Nor
 * with two payment providers (PAYMENT_URL and STRIPE_SECRET_KEY): which one paid would be a guess.
 */
function refuseImpliedSimulators(): void {
  const both =
    env.PAYMENT_URL && env.STRIPE_SECRET_KEY
      ? "both PAYMENT_URL and STRIPE_SECRET_KEY are set (refunds go through one payment provider: unset one)"
      : null;
  const missing = [
    both,
    env.DATABASE_URL && !env.PAYMENT_URL && !env.STRIPE_SECRET_KEY && !env.PAYMENT_SIMULATED
      ? "neither PAYMENT_URL nor STRIPE_SECRET_KEY is set (set PAYMENT_SIMULATED=1 to pay through the in-process simulator: nothing is paid)"
      : null,
    env.DATABASE_URL && !env.SMTP_URL && !env.EMAIL_SIMULATED
      ? "SMTP_URL is not set (set EMAIL_SIMULATED=1 to write .eml files to MAIL_DIR instead: nothing is mailed)"
      : null,
  ].filter((m): m is string => m !== null);
  if (missing.length === 0) return;
  logger().fatal({ code: "unavailable:configuration", missing }, `start: refused — ${missing.join("; ")}`);
  process.exit(78);
}

/** Personal data is kept under keys: a deployment without a master key (or a malformed one) does not start. */
function refuseMissingDataKeys(): void {
  try {
    logger().info({ source: dataKeys().source }, "data keys: personal data is sealed under per-subject keys");
  } catch (error) {
    logger().fatal({ code: "unavailable:configuration" }, `start: refused — ${(error as Error).message}`);
    process.exit(78);
  }
}

/**
 * In production, a version this build refused (its graph is not what it declares) with threads waiting on it stops the
 * start: a careless deploy goes no further, and the rollout with it. START_WITH_REFUSED_VERSIONS=1 serves those
 * threads read-only instead.
 */
async function refuseStartOnWaitingRefusedVersions(db: AppDb): Promise<void> {
  const refused = listRefusedVersions();
  if (refused.length === 0 || env.NODE_ENV !== "production" || env.START_WITH_REFUSED_VERSIONS) return;
  const waiting = await countOpenThreadsOn({ db, versions: refused });
  if (waiting === 0) return;
  const names = refused.map((r) => `${r.agent}@${r.version}`).join(", ");
  logger().fatal(
    { code: "unavailable:configuration", refused, waiting },
    `start: refused — ${names} refused (its graph is not what it declares) and ${waiting} thread(s) wait on it: deploy a build that bumps the version and keeps the old one, or roll back; START_WITH_REFUSED_VERSIONS=1 serves them read-only`,
  );
  process.exit(78);
}

/** `MULTITASK` names agents this build has: a typo would leave the declared strategy in force, silently. */
function refuseUnknownMultitaskAgents(): void {
  const unknown = Object.keys(env.MULTITASK).filter((id) => !hasAgent(id));
  if (unknown.length === 0) return;
  logger().fatal(
    { code: "unavailable:configuration", unknown },
    `start: refused — MULTITASK names no registered agent: ${unknown.join(", ")}`,
  );
  process.exit(78);
}

/** One attempt; idempotent (each step is, so a retry after a partial start is safe). */
async function startRuntime(): Promise<boolean> {
  let database: Database;
  try {
    database = await getDatabase();
    // Opening a pool does not connect (MIGRATE_ON_START=false): ask for proof.
    await database.sql.query("SELECT 1");
    await refuseStartOnWaitingRefusedVersions(database.db);
    await registerInstance({ db: database.db, instance: { id: instanceId(), ...instanceLabels() } });
    if (database.kind === "postgres") await startEventListener();
    else await listenEmbedded(database);
    await startRecovery();
    // Side effects recorded by runs (payments, email) leave the process here, on every instance.
    await startDispatcher();
    // Deadlines (escalation, expiry answers), notifications and expired claims: every instance ticks, one works.
    startDeadlines();
    startRetentionSchedule();
    startReconcileSchedule();
    // The audit trail's hash chain is linked after commit, off every audited transaction's path.
    startAuditChainer();
    // A SIGTERM may have come while the database was away: a drain is never undone.
    if (runtimePhase() === "starting") setRuntimePhase("running");
    reportReachable("start");
    logger().info({ database: database.kind, instance: instanceId() }, "start: database ready");
  } catch (error) {
    reportUnreachable("start", error);
    return false;
  }
  // Accounts and demo data are not the runtime: a failure here is reported and must not hold recovery back.
  await ensureFirstAdmin({ db: database.db }).catch((e) =>
    logger().error(errorFields(e), "auth: first admin not created"),
  );
  await seedDemoUsers({ db: database.db }).catch((e) =>
    logger().error(errorFields(e), "demo: demo operators not created"),
  );
  // The demo shop's orders are sealed under their customers' keys: a key service that fails leaves them out (said in
  // the log), never the server unstarted.
  if (env.DEMO_ORDERS)
    await seedDemoOrders({ db: database.db }).catch((e) =>
      logger().error(errorFields(e), "demo: demo orders not created"),
    );
  if (env.DEMO_THREADS)
    void seedDemoThreads({ database }).catch((e) => logger().error(errorFields(e), "demo: seeding failed"));
  startQueueSampler();
  return true;
}
