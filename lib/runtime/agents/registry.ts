import "server-only";
import type { DescribeInterrupt } from "@/lib/agui";
import type { MultitaskStrategy } from "@/lib/contract/wire";
import { env } from "@/lib/platform/env";
import type { AgentDefinition } from "./agent-definition";
import { withRuntimeQuestions } from "./runtime-questions";

export type * from "./agent-definition";

/*
 * The registry of agents: the app registers its agents at start (`lib/agents/index.ts`), and every thread names the agent it
 * runs. What an agent brings is an `AgentDefinition` (./agent-definition.ts).
 */
/** An agent's double-texting strategy: the deployment's override (`MULTITASK`), else its declaration, else `reject`. */
export function multitaskOf(agent: Pick<AgentDefinition, "id" | "multitask">): MultitaskStrategy {
  return env.MULTITASK[agent.id] ?? agent.multitask ?? "reject";
}

const KEY = Symbol.for("hitl-console.agents");
const REFUSED_KEY = Symbol.for("hitl-console.agents-refused");
type G = typeof globalThis & {
  [KEY]?: Map<string, AgentDefinition>;
  [REFUSED_KEY]?: Map<string, RefusedVersion>;
};

function registry(): Map<string, AgentDefinition> {
  const g = globalThis as G;
  g[KEY] ??= new Map();
  return g[KEY];
}

/** An agent version this process will not run: what it declared and what its graph is. */
export interface RefusedVersion {
  agent: string;
  version: string;
  declared: string;
  actual: string;
  reason: string;
}

function refusedVersions(): Map<string, RefusedVersion> {
  const g = globalThis as G;
  g[REFUSED_KEY] ??= new Map();
  return g[REFUSED_KEY];
}

/**
 * Take a version out of service in this process (its declaration does not match its graph): it is no longer found,
 * current, or claimable, and registering it again (another bundle evaluating the agents) does not bring it back.
 */
export function refuseAgentVersion(refused: RefusedVersion): void {
  refusedVersions().set(`${refused.agent}@${refused.version}`, refused);
  registry().delete(`${refused.agent}@${refused.version}`);
}

/** The versions this process refused to serve (health reports them). */
export function listRefusedVersions(): RefusedVersion[] {
  return [...refusedVersions().values()];
}

/** `agent@version`, the key runs carry (an instance claims only runs whose key it has). */
export function agentKey(agent: Pick<AgentDefinition, "id" | "version">): string {
  return `${agent.id}@${agent.version}`;
}

/**
 * Register an agent version (idempotent). The highest registered version of an id is its current one: new threads
 * start on it; older registered versions keep running the threads pinned to them.
 */
export function registerAgent<P>(definition: AgentDefinition<P>): void {
  if (refusedVersions().has(agentKey(definition))) return;
  // The runtime only hands an agent payloads its own contract parsed: erasing P here is safe.
  registry().set(agentKey(definition), withRuntimeQuestions(definition) as unknown as AgentDefinition);
}

function versionsOf(id: string): AgentDefinition[] {
  return [...registry().values()]
    .filter((a) => a.id === id)
    .sort((a, b) => compareVersions(a.version, b.version));
}

/** Versions compare numerically part by part ("2" > "1.9", "10" > "9"). */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(".").map(Number);
  const pb = b.split(".").map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** The agent `id` at `version` (or its current version), or an error naming what is registered. */
export function getAgent(id: string, version?: string): AgentDefinition {
  const agent = version ? registry().get(`${id}@${version}`) : versionsOf(id).at(-1);
  if (!agent) {
    throw new Error(
      `agent ${id}${version ? `@${version}` : ""} is not registered (registered: ${[...registry().keys()].join(", ") || "none"})`,
    );
  }
  return agent;
}

/** The agent at that version, or undefined when this process does not have it. */
export function findAgent(id: string, version: string): AgentDefinition | undefined {
  return registry().get(`${id}@${version}`);
}

/** The current version of every registered agent, in registration order of their ids. */
export function listAgents(): AgentDefinition[] {
  const ids = [...new Set([...registry().values()].map((a) => a.id))];
  return ids.map((id) => getAgent(id));
}

/** Every registered `agent@version` key (the runs this process may claim). */
export function registeredAgentKeys(): string[] {
  return [...registry().keys()];
}

/** Whether an agent id is registered (validating input before it reaches `getAgent`). */
export function hasAgent(id: string): boolean {
  return versionsOf(id).length > 0;
}

/** The agent's contract as the AG-UI mapper reads interrupts: kind, headline and answer schema. */
export function interruptDescriber(agent: AgentDefinition): DescribeInterrupt {
  return (value) => {
    const parsed = agent.interrupts.parse(value);
    return parsed.ok
      ? {
          reason: parsed.action,
          message: parsed.title,
          responseSchema: agent.interrupts.responseSchema(parsed.payload),
        }
      : null;
  };
}
