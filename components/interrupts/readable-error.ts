/** zod's own wording ("Too small: expected string to have >=1 characters") as a sentence for the operator. */
function plainZod(line: string): string {
  if (!/expected|Invalid|Too (small|big)/i.test(line)) return line;
  const most = /<=\s*(\d+)/.exec(line)?.[1];
  const least = />=\s*(\d+)/.exec(line)?.[1];
  if (/Too small/i.test(line) && /string/.test(line)) {
    return least && least !== "1"
      ? `A field needs at least ${least} characters`
      : "A required field is empty";
  }
  if (/Too big/i.test(line) && most) return `A field is longer than its limit of ${most} characters`;
  return "Some of what was entered is not valid";
}

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
    .map(plainZod)
    .map((l) => l.charAt(0).toUpperCase() + l.slice(1) + (/[.!?]$/.test(l) ? "" : "."));
  return [...new Set(lines)].join(" ");
}
