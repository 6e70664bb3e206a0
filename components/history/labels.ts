import type { WrittenBy } from "@/lib/contract/views/history";

/** Who made a checkpoint, in words. */
export function writtenByText(w: WrittenBy): string {
  switch (w.kind) {
    case "nodes":
      return w.nodes.length > 0 ? w.nodes.join(", ") : "start";
    case "input":
      return "run input";
    case "update":
      return "state edit (fork)";
    case "fork":
      return "copy (fork)";
    case "migration":
      return "moved to a new version (migration)";
  }
}

/**
 * Lines in words: "main" is the line the thread continues on; the others are lines a fork left behind, numbered as
 * the history numbers them ("branch-1" → "Earlier line 1") — not a name that makes the original line look like a copy.
 */
export function branchName(label: string): string {
  if (label === "main") return "Current line";
  const n = /^branch-(\d+)$/.exec(label)?.[1];
  return n ? `Earlier line ${n} (left by a fork)` : label;
}
