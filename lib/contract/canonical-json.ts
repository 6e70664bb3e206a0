/**
 * A payload's canonical text: JSON with object keys sorted at every level, so the same question reads the same
 * whether it comes from the graph or back from a jsonb column (which reorders keys). Used to check that a resumed
 * step asks the very question whose answer it is given (lib/agents/kit/ask-human.ts).
 */
export function canonicalPayload(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value as Record<string, unknown>)
        .sort()
        .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}
