import "server-only";
import type { AgentDefinition } from "@/lib/runtime/agents/registry";

/*
 * Agent packages: a team's agent in its own package, listed by module specifier in `agents.config.json` at the root
 * (a path from the root, or an installed npm package). `scripts/agents-registry.mjs` generates
 * `registered.generated.ts` from that list (Next bundles only static imports); this module reads what each package
 * exports. No file under lib/, app/ or components/ names a package.
 */

/** One listed package: its specifier as the config writes it, and the module it resolved to. */
export interface AgentPackage {
  specifier: string;
  module: Record<string, unknown>;
}

function isDefinition(value: unknown): value is AgentDefinition {
  if (!value || typeof value !== "object") return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.id === "string" &&
    typeof v.version === "string" &&
    typeof v.build === "function" &&
    typeof v.policy === "function" &&
    typeof v.interrupts === "object"
  );
}

/**
 * The agent definitions a package serves: its `agents` export (every version it serves), else its default export
 * (one definition or a list). A package that exports neither, or something that is not a definition, is an error
 * naming the package — a console never starts with an agent silently missing.
 */
export function agentsOfPackage({ specifier, module }: AgentPackage): AgentDefinition[] {
  const exported = module.agents ?? module.default;
  const list = Array.isArray(exported) ? exported : exported === undefined ? [] : [exported];
  if (list.length === 0) {
    throw new Error(
      `agent package ${specifier} (agents.config.json) exports no agents: export \`agents\`, a list of its agent definitions`,
    );
  }
  for (const [i, item] of list.entries()) {
    if (!isDefinition(item)) {
      throw new Error(
        `agent package ${specifier}: its agents[${i}] is not an agent definition (id, version, build, policy, interrupts)`,
      );
    }
  }
  return list as AgentDefinition[];
}
