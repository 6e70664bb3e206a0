/**
 * zod's prettified error ("✖ say why…\n  → at note") as sentences for the operator: one line per problem, the
 * first letter capitalized, the field path dropped (the message sits next to the field or the form it is about).
 */
export function readableError(prettified: string): string {
  const lines = prettified
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("→"))
    .map((l) => l.replace(/^✖\s*/, ""))
    .map((l) => l.charAt(0).toUpperCase() + l.slice(1) + (/[.!?]$/.test(l) ? "" : "."));
  return [...new Set(lines)].join(" ");
}
