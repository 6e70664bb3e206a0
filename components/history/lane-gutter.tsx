import { laneColor } from "./lane-colors";
import type { LaneRow } from "./lanes";

const STEP = 18;
const x = (lane: number) => lane * STEP + STEP / 2;

/** The lanes of one row: vertical lines, the connector of a branch that starts here, and the checkpoint's dot. */
export function LaneGutter({
  row,
  laneCount,
  head,
  paused,
}: {
  row: LaneRow;
  laneCount: number;
  head: boolean;
  paused: boolean;
}) {
  return (
    <div aria-hidden="true" className="relative shrink-0" style={{ width: laneCount * STEP + 4 }}>
      {row.lines.map(({ lane, segment }) => (
        <span
          key={`${lane}-${segment}`}
          className={`absolute w-0.5 ${laneColor(lane).line}`}
          style={{
            left: x(lane) - 1,
            top: segment === "down" ? "50%" : 0,
            bottom: segment === "up" ? "50%" : 0,
          }}
        />
      ))}
      {row.joins.map(({ from, to }) => (
        <span
          key={`${from}-${to}`}
          className={`absolute h-0.5 ${laneColor(to).line}`}
          style={{ left: x(Math.min(from, to)), width: Math.abs(to - from) * STEP, top: "calc(50% - 1px)" }}
        />
      ))}
      <span
        className={`absolute size-3 rounded-full ring-2 ${laneColor(row.lane).dot} ${paused ? "bg-white" : ""} ${
          head ? "ring-offset-2" : ""
        }`}
        style={{ left: x(row.lane) - 6, top: "calc(50% - 6px)" }}
      />
    </div>
  );
}
