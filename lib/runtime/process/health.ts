import "server-only";
import { getDatabase } from "@/lib/db/client";
import { checkDatabase, type DatabaseHealth } from "@/lib/db/health";
import { countOpenThreadsOn } from "@/lib/db/queries/threads";
import { failingTasksWithFaults, runtimePhase } from "../../platform/status";
import { listRefusedVersions, type RefusedVersion } from "../agents/registry";

export interface HealthReport extends Omit<DatabaseHealth, "code"> {
  /** Agent versions this instance refused at start (their graph is not what they declare): never run here. */
  refusedVersions?: RefusedVersion[];
  /** ok: serving and recovering; degraded: serving, but the database or the runtime's background work is not up;
   * draining: shutting down, send new work elsewhere. Anything but ok answers 503. */
  status: "ok" | "degraded" | "draining";
  code?:
    | "unavailable:database"
    | "unavailable:database_busy"
    | "unavailable:runtime"
    | "unavailable:draining"
    | "degraded:refused_versions";
  /** Why it is not ok, for people (no database details: those are in the server log). */
  reason?: string;
}

/**
 * This instance's health: the database answers, and recovery, heartbeat and LISTEN run (they start as soon as the
 * database is reachable and resume when it comes back). While either is not the case, or while draining, it says
 * why. An agent version it refused at start leaves it serving (every thread still reads) but `degraded`, naming the
 * version; asked for readiness (`probe: "ready"`), that is a 503 while threads wait on such a version, so an
 * orchestrator stops the rollout there.
 */
export async function checkHealth({
  probe = "live",
}: {
  probe?: "live" | "ready";
} = {}): Promise<HealthReport> {
  const report = await checkRuntimeHealth();
  const refused = listRefusedVersions();
  if (refused.length === 0) return report;
  if (!report.ok) return { ...report, refusedVersions: refused };
  const waiting =
    probe === "ready" ? await countOpenThreadsOn({ db: (await getDatabase()).db, versions: refused }) : 0;
  return {
    ...report,
    ok: probe === "live" || waiting === 0,
    status: "degraded",
    code: "degraded:refused_versions",
    reason: `This server refused ${refused.map((r) => `${r.agent}@${r.version}`).join(", ")} (the graph is not what the version declares): their threads can be read here, not run${probe === "ready" ? `; ${waiting} thread(s) wait on them` : ""}. Deploy a build that bumps the version and keeps the old one, or roll back.`,
    refusedVersions: refused,
  };
}

/** What an unavailable database's fault means, for the people reading /api/health (docs/operations.md). */
const UNAVAILABLE_WORDS: Record<string, string> = {
  unreachable: "The database is unreachable (refused, or no answer).",
  connection_lost: "The database cut its connections (it died, restarted or moved).",
  shutting_down: "The database is shutting down (a failover's old primary, a restart).",
  starting_up: "The database is starting up or in recovery (a failover's new primary, a restart).",
  read_only: "The database answers read-only: the address still points at a standby.",
  too_many_connections: "The database has no connection slot free (max_connections, or the role's limit).",
  timeout: "The database did not answer the health check in time.",
};

async function checkRuntimeHealth(): Promise<HealthReport> {
  if (runtimePhase() === "draining") {
    return {
      ok: false,
      status: "draining",
      database: "unavailable",
      code: "unavailable:draining",
      reason: "This instance is shutting down: it takes no new runs and hands its runs over.",
    };
  }
  // The probe opens the database itself (under checkDatabase's limit): it answers when the database does not.
  const db = await checkDatabase({ opening: getDatabase() });
  if (!db.ok) {
    if (db.code === "unavailable:database_busy") {
      return {
        ...db,
        status: "degraded",
        code: "unavailable:database_busy",
        reason: `The database is reachable but did not answer within the limit: a transaction holds it${
          db.waiting !== undefined ? ` (${db.waiting} statements waiting for the embedded database)` : ""
        }. Requests answer 503 unavailable:database_busy until it is free.`,
      };
    }
    return {
      ...db,
      status: "degraded",
      code: "unavailable:database",
      reason: `${UNAVAILABLE_WORDS[db.fault ?? "unreachable"] ?? UNAVAILABLE_WORDS.unreachable} Requests answer 503 unavailable:database; recovery, heartbeat and LISTEN resume when it is back.`,
    };
  }
  if (runtimePhase() === "starting") {
    return {
      ...db,
      ok: false,
      status: "degraded",
      code: "unavailable:runtime",
      reason: "Recovery, heartbeat and LISTEN have not started yet (waiting for the database).",
    };
  }
  const failing = failingTasksWithFaults();
  if (failing.length > 0) {
    return {
      ...db,
      ok: false,
      status: "degraded",
      code: "unavailable:runtime",
      reason: `Not reaching the database yet: ${failing.join(", ")}.`,
    };
  }
  return { ...db, status: "ok" };
}
