"use client";

import { useEffect, useRef } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

export interface ChartSeries {
  label: string;
  color: string;
  values: (number | null)[];
  /** Which y axis: the left one (default) or the right one (another unit). */
  axis?: "left" | "right";
}

/**
 * A time-series chart (uPlot, canvas): x in unix seconds, one line per series, or stacked bars. The page gives the
 * current numbers as text (tiles, tables); the canvas is hidden from screen readers.
 */
export function TimeChart({
  times,
  series,
  stacked = false,
  leftUnit,
  rightUnit,
  testId,
}: {
  times: number[];
  series: ChartSeries[];
  stacked?: boolean;
  leftUnit: string;
  rightUnit?: string;
  testId: string;
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    // Stacked bars: each series drawn as the sum of itself and those below it, tallest first, so every part shows.
    const drawn = stacked ? cumulative(series) : series;
    const order = stacked ? [...drawn].reverse() : drawn;
    const bars = uPlot.paths.bars?.({ size: [0.7, 48] });
    const step = times.length > 1 ? (times[1] as number) - (times[0] as number) : 3600;
    const options: uPlot.Options = {
      width: Math.max(280, el.clientWidth),
      height: 220,
      legend: { show: true },
      cursor: { drag: { x: false, y: false } },
      scales: {
        // Bars are centred on their time: pad the x range by half a step so the first and last are whole.
        x: { time: true, ...(stacked ? { range: (_u, min, max) => [min - step / 2, max + step / 2] } : {}) },
        left: { auto: true, range: (_u, _min, max) => [0, Math.max(1, max)] },
      },
      axes: [
        { stroke: "#334155" },
        { scale: "left", label: leftUnit, stroke: "#334155" },
        ...(rightUnit
          ? [{ scale: "right", side: 1 as const, label: rightUnit, stroke: "#334155", grid: { show: false } }]
          : []),
      ],
      series: [
        {},
        ...order.map((s) => ({
          label: s.label,
          stroke: s.color,
          width: stacked ? 0 : 2,
          scale: s.axis === "right" ? "right" : "left",
          ...(stacked ? { fill: s.color, paths: bars } : {}),
        })),
      ],
    };
    const plot = new uPlot(options, [times, ...order.map((s) => s.values)] as uPlot.AlignedData, el);
    const resize = new ResizeObserver(() =>
      plot.setSize({ width: Math.max(280, el.clientWidth), height: 220 }),
    );
    resize.observe(el);
    el.dataset.drawn = "true";
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [times, series, stacked, leftUnit, rightUnit]);
  return <div ref={box} aria-hidden="true" data-testid={testId} className="min-h-[260px] w-full" />;
}

function cumulative(series: ChartSeries[]): ChartSeries[] {
  let below: number[] = [];
  return series.map((s) => {
    const sums = s.values.map((v, i) => (v ?? 0) + (below[i] ?? 0));
    below = sums;
    return { ...s, values: sums };
  });
}
