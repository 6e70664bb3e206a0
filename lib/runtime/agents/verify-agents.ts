import "server-only";
import { env } from "@/lib/platform/env";
import { errorFields, logger } from "@/lib/platform/observability/logger";
import { structureHash } from "./graph-structure";
import {
  type AgentDefinition,
  getAgent,
  type RefusedVersion,
  refuseAgentVersion,
  registeredAgentKeys,
} from "./registry";

/*
 * Declarations are verified, not trusted. A version declares the hash of its graph's structure (nodes, edges,
 * interrupt points, state channels, question kinds, tools and their argument schemas, tool review settings); a build that changes the graph without bumping the version — a renamed state
 * field the approval reads — would resume paused threads on a graph that reads their state differently (it paid €300
 * where €120 was approved). So at start every registered version's graph is built and hashed; a version whose hash is
 * not the one it declares is refused: not run, not claimed, not current. Health lists it; the log says why.
 */

/** Check every registered agent version against its declared structure hash; refuse the ones that differ. */
export async function verifyAgentVersions(): Promise<RefusedVersion[]> {
  if (env.UNSAFE_SKIP_STRUCTURE_CHECK) {
    logger().warn(
      "agents: the structure check is switched off (UNSAFE_SKIP_STRUCTURE_CHECK): for tests only",
    );
    return [];
  }
  const refused: RefusedVersion[] = [];
  for (const key of registeredAgentKeys()) {
    const [id, version] = key.split("@") as [string, string];
    const entry = await checkDeclaredHash(getAgent(id, version));
    if (!entry) continue;
    refuseAgentVersion(entry);
    refused.push(entry);
    logger().error(
      { agent: id, version, declared: entry.declared, actual: entry.actual },
      `agents: ${key} refused — ${entry.reason}; no thread runs on it here`,
    );
  }
  return refused;
}

/**
 * One agent version against the hash it declares: null when its graph hashes to it, else why it is refused (a graph
 * that cannot be built, or whose review settings cannot be read, hashes as "unbuildable").
 */
export async function checkDeclaredHash(agent: AgentDefinition): Promise<RefusedVersion | null> {
  let actual: string;
  try {
    actual = await structureHash(agent);
  } catch (error) {
    actual = "unbuildable";
    logger().error(
      { agent: agent.id, version: agent.version, ...errorFields(error) },
      "agents: graph could not be built",
    );
  }
  if (actual === agent.structureHash) return null;
  return {
    agent: agent.id,
    version: agent.version,
    declared: agent.structureHash,
    actual,
    reason:
      "its graph does not match the structure hash it declares: a changed graph needs a new version (and the old one kept)",
  };
}
