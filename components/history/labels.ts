import type { WrittenBy } from "@/lib/runtime/history-view";

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

/** "main" reads as the current line of the thread; side branches keep their labels. */
export function branchName(label: string): string {
  return label === "main" ? "main (current)" : label;
}
