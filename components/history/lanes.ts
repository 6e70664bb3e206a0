/*
 * Lanes for the checkpoint tree, drawn like `git log --graph`: checkpoints newest first, one column (lane) per
 * branch — `main` (the head's chain) in the first — and a connector where a branch leaves the checkpoint it was
 * forked from. Pure: takes the history API's labels and returns what to draw on each row.
 */

/** What a row needs from a checkpoint. */
export interface LaneInput {
  checkpointId: string;
  parentCheckpointId: string | null;
  branch: string;
}

/** Half segments of a lane's vertical line on one row: above the dot, below it, or both. */
export type Segment = "up" | "down" | "through";

export interface LaneRow {
  /** The lane of this row's checkpoint. */
  lane: number;
  /** Vertical lines to draw on this row, by lane. */
  lines: { lane: number; segment: Segment }[];
  /** Horizontal connectors at the dot's height: a branch (lane `to`) leaving this checkpoint (lane `from`). */
  joins: { from: number; to: number }[];
}

export interface LaneLayout {
  rows: LaneRow[];
  laneCount: number;
  /** Lane of each branch label, in the order given. */
  laneOf: Map<string, number>;
}

/**
 * Lay out `rows` (newest first). `branchOrder` gives the branch labels' lanes (`main` first, as the API lists them);
 * labels missing from it get lanes after. A branch runs from its newest checkpoint down to its oldest one — or, when
 * that one's parent is on the page on another lane, down to that parent, where it joins.
 */
export function layoutLanes(rows: readonly LaneInput[], branchOrder: readonly string[]): LaneLayout {
  const laneOf = new Map<string, number>();
  for (const label of [...branchOrder, ...rows.map((r) => r.branch)]) {
    if (!laneOf.has(label)) laneOf.set(label, laneOf.size);
  }
  const index = new Map(rows.map((r, i) => [r.checkpointId, i]));
  const span = new Map<string, { top: number; bottom: number; forkRow: number | null }>();
  rows.forEach((row, i) => {
    const s = span.get(row.branch);
    if (!s) span.set(row.branch, { top: i, bottom: i, forkRow: null });
    else s.bottom = i;
  });
  for (const [label, s] of span) {
    const oldest = rows[s.bottom];
    const parentRow = oldest?.parentCheckpointId ? index.get(oldest.parentCheckpointId) : undefined;
    if (parentRow !== undefined && rows[parentRow]?.branch !== label) s.forkRow = parentRow;
  }

  const out: LaneRow[] = rows.map((row) => ({ lane: laneOf.get(row.branch) ?? 0, lines: [], joins: [] }));
  for (const [label, s] of span) {
    const lane = laneOf.get(label) ?? 0;
    const end = s.forkRow ?? s.bottom;
    const continuesBelow = s.forkRow !== null || (rows[s.bottom]?.parentCheckpointId ?? null) !== null;
    for (let i = s.top; i <= end; i += 1) {
      const row = out[i];
      if (!row) continue;
      if (i === s.forkRow) {
        row.lines.push({ lane, segment: "up" });
        row.joins.push({ from: row.lane, to: lane });
      } else if (i === s.top && i === end) {
        if (continuesBelow) row.lines.push({ lane, segment: "down" });
      } else if (i === s.top) {
        row.lines.push({ lane, segment: "down" });
      } else if (i === end && !continuesBelow) {
        row.lines.push({ lane, segment: "up" });
      } else {
        row.lines.push({ lane, segment: "through" });
      }
    }
  }
  return { rows: out, laneCount: Math.max(1, laneOf.size), laneOf };
}
