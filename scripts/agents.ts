/**
 * `npm run agents -- versions`: the registered agent versions of this build and, from DATABASE_URL (or the embedded
 * database when it is unset), how many threads each version holds, open and finished. A version can be retired (its
 * definition deleted from its versions folder) once no open thread uses it — or after its threads were migrated,
 * forked onto the current version or closed. Prints one JSON line per agent version.
 */
import "@/lib/agents/index";
import { openPglite, openPostgres } from "@/lib/db/open";
import { countThreadsByVersion } from "@/lib/db/queries/threads";
import { env } from "@/lib/platform/env";
import { getAgent, listAgents, registeredAgentKeys } from "@/lib/runtime/agents/registry";
import { usageExit } from "./cli";

const USAGE = "usage: npm run agents -- versions";
const FINISHED = new Set(["completed", "closed"]);

const [command] = process.argv.slice(2);
if (command !== "versions") usageExit("agents", USAGE, `unknown command ${command ?? "(none)"}`);

const database = env.DATABASE_URL
  ? openPostgres(env.DATABASE_URL, { max: 2, pooled: env.DATABASE_POOLER === "transaction" })
  : await openPglite(env.PGLITE_DATA_DIR);
try {
  const rows = await countThreadsByVersion({ db: database.db });
  const keys = new Set([...registeredAgentKeys(), ...rows.map((r) => `${r.agentId}@${r.agentVersion}`)]);
  const current = new Map(listAgents().map((a) => [a.id, a.version]));
  for (const key of [...keys].sort()) {
    const [id, version] = key.split("@") as [string, string];
    const mine = rows.filter((r) => r.agentId === id && r.agentVersion === version);
    const open = mine.filter((r) => !FINISHED.has(r.status)).reduce((n, r) => n + r.threads, 0);
    const finished = mine.filter((r) => FINISHED.has(r.status)).reduce((n, r) => n + r.threads, 0);
    const deployed = registeredAgentKeys().includes(key);
    console.log(
      JSON.stringify({
        agent: id,
        version,
        current: current.get(id) === version,
        deployed,
        openThreads: open,
        finishedThreads: finished,
        retire:
          deployed && current.get(id) !== version && open === 0 ? "safe" : deployed ? "keep" : "retired",
        ...(deployed ? { structureHash: getAgent(id, version).structureHash } : {}),
      }),
    );
  }
} finally {
  await database.close();
}
