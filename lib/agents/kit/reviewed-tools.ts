import "server-only";
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
export function reviewToolCalls(interruptOn: InterruptOn) {
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
