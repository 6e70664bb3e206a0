import type { HistoryCheckpoint } from "@/lib/contract/views/history";

/**
 * The newest step both checkpoints descend from (themselves included), walking parents through the loaded history;
 * null when their chains leave what is loaded before they meet.
 */
export function commonAncestor<C extends Pick<HistoryCheckpoint, "checkpointId" | "parentCheckpointId">>(
  checkpoints: readonly C[],
  a: string,
  b: string,
): C | null {
  const byId = new Map(checkpoints.map((c) => [c.checkpointId, c]));
  const ofA = new Set<string>();
  for (let c = byId.get(a); c; c = c.parentCheckpointId ? byId.get(c.parentCheckpointId) : undefined)
    ofA.add(c.checkpointId);
  for (let c = byId.get(b); c; c = c.parentCheckpointId ? byId.get(c.parentCheckpointId) : undefined)
    if (ofA.has(c.checkpointId)) return c;
  return null;
}
