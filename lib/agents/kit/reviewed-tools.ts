import "server-only";
import { toJsonSchema } from "@langchain/core/utils/json_schema";
import { humanInTheLoopMiddleware } from "langchain";
import { canonicalPayload } from "@/lib/contract/canonical-json";
import { REVIEW_SETTINGS } from "@/lib/runtime/agents/graph-structure";

/** LangChain's per-tool review settings (`humanInTheLoopMiddleware`'s `interruptOn`). */
type InterruptOn = NonNullable<Parameters<typeof humanInTheLoopMiddleware>[0]>["interruptOn"];

/**
 * LangChain's `humanInTheLoopMiddleware`, with its review settings readable by the structure hash: which tools a
 * person reviews, the decisions they may take, the wording and the edit schema. A paused thread depends on all of
 * them (a tool no longer reviewed would run without its person; a decision no longer allowed would be refused on
 * resume), so changing one in place changes the hash and the version is refused until it is bumped. The raw
 * middleware hides its settings, so an agent built with it directly is refused as unbuildable: use this.
 */
export function reviewToolCalls(
  interruptOn: InterruptOn,
  { tools = [] }: { tools?: readonly SchemaTool[] } = {},
) {
  interruptOn = withToolSchemas(interruptOn, tools);
  const middleware = humanInTheLoopMiddleware({ interruptOn });
  const settings = Object.entries(interruptOn ?? {})
    .map(([tool, config]) => {
      if (typeof config === "boolean") return `${tool}:${config}`;
      const { allowedDecisions, description, argsSchema } = config as {
        allowedDecisions?: string[];
        description?: unknown;
        argsSchema?: unknown;
      };
      return `${tool}:${canonicalPayload({
        allowedDecisions: [...(allowedDecisions ?? [])].sort(),
        // A description computed per call is code: its presence is hashed, not its text.
        description: typeof description === "function" ? "(computed)" : (description ?? null),
        argsSchema: argsSchema ?? null,
        when: "when" in (config as object) ? "(computed)" : null,
      })}`;
    })
    .sort();
  Object.defineProperty(middleware, REVIEW_SETTINGS, { value: settings, enumerable: false });
  return middleware;
}

/** A tool as far as its review needs it: its name and argument schema (a LangChain tool has both). */
interface SchemaTool {
  name: string;
  schema?: unknown;
}

/**
 * The review settings with each reviewed tool's argument schema filled in from the tool itself, where the settings
 * give none — `{ my_tool: true }` as LangChain's docs write it, or a config without `argsSchema`: the reviewer then edits
 * arguments in a form generated from the schema (and the edit is checked against it), not as raw JSON. `true` means what
 * it means to LangChain: reviewed, with approve, edit and reject allowed. Settings that give a schema keep theirs.
 */
function withToolSchemas(interruptOn: InterruptOn, tools: readonly SchemaTool[]): InterruptOn {
  if (!interruptOn || tools.length === 0) return interruptOn;
  const schemas = new Map<string, Record<string, unknown>>();
  for (const t of tools) {
    if (!t.schema) continue;
    try {
      schemas.set(
        t.name,
        toJsonSchema(t.schema as Parameters<typeof toJsonSchema>[0]) as Record<string, unknown>,
      );
    } catch {
      // A schema LangChain cannot express as JSON Schema: the reviewer edits raw JSON, as before.
    }
  }
  return Object.fromEntries(
    Object.entries(interruptOn).map(([name, config]) => {
      const argsSchema = schemas.get(name);
      if (!argsSchema || config === false) return [name, config];
      if (config === true) return [name, { allowedDecisions: ["approve", "edit", "reject"], argsSchema }];
      return [name, "argsSchema" in config && config.argsSchema ? config : { ...config, argsSchema }];
    }),
  ) as InterruptOn;
}
