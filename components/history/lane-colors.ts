/** One colour per lane (branch), cycling; the branch label is always written out too. */
const COLORS = [
  {
    line: "bg-indigo-600",
    dot: "bg-indigo-600 ring-indigo-600",
    chip: "bg-indigo-50 text-indigo-800 ring-indigo-200",
  },
  {
    line: "bg-amber-600",
    dot: "bg-amber-600 ring-amber-600",
    chip: "bg-amber-50 text-amber-900 ring-amber-200",
  },
  {
    line: "bg-emerald-600",
    dot: "bg-emerald-600 ring-emerald-600",
    chip: "bg-emerald-50 text-emerald-800 ring-emerald-200",
  },
  { line: "bg-rose-600", dot: "bg-rose-600 ring-rose-600", chip: "bg-rose-50 text-rose-800 ring-rose-200" },
  { line: "bg-sky-600", dot: "bg-sky-600 ring-sky-600", chip: "bg-sky-50 text-sky-800 ring-sky-200" },
  {
    line: "bg-violet-600",
    dot: "bg-violet-600 ring-violet-600",
    chip: "bg-violet-50 text-violet-800 ring-violet-200",
  },
] as const;

export function laneColor(lane: number) {
  return COLORS[lane % COLORS.length] ?? COLORS[0];
}
