import type { DrawnNode, GraphDrawing } from "@/lib/contract/views/graph";

/**
 * The agent's graph (laid out on the server from the thread version's compiled graph), with the selected step placed
 * on it: the node(s) that wrote the step, and the node(s) that run next from it. Nodes that ask a person are marked;
 * conditional edges are dashed. Wider than its column, it scrolls inside its own box — the page never does.
 */
export function AgentGraph({
  drawing,
  current,
  next,
  step,
}: {
  drawing: GraphDrawing;
  /** Nodes that wrote the selected step (none for an input, an edit or a fork's copy). */
  current: readonly string[];
  /** Nodes scheduled to run from the selected step. */
  next: readonly string[];
  step: number | null;
}) {
  const stateOf = (n: DrawnNode) =>
    current.includes(n.id) ? "current" : next.includes(n.id) ? "next" : "other";
  const said = [
    current.length > 0 ? `written by ${current.map(labelOf(drawing)).join(", ")}` : null,
    next.length > 0 ? `next: ${next.map(labelOf(drawing)).join(", ")}` : "nothing runs next",
  ]
    .filter(Boolean)
    .join("; ");
  const titleId = `agent-graph-${drawing.agent}-title`;
  return (
    <figure data-testid="agent-graph" data-agent={drawing.agent} className="space-y-2">
      <figcaption id={titleId} className="text-sm text-slate-700">
        The {drawing.agent.replaceAll("_", " ")} agent (version {drawing.version})
        {step !== null ? `, at step ${step}` : ""}: {said}.
      </figcaption>
      <section
        className="max-h-[28rem] max-w-full overflow-auto rounded-md border border-slate-200 bg-slate-50"
        data-testid="agent-graph-scroll"
        aria-labelledby={titleId}
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a scroll box is focusable so the keyboard can scroll it
        tabIndex={0}
      >
        <svg
          width={drawing.width}
          height={drawing.height}
          viewBox={`0 0 ${drawing.width} ${drawing.height}`}
          role="img"
          className="block"
        >
          <title>{`The agent's graph: ${said}`}</title>
          <defs>
            <marker
              id="agent-graph-arrow"
              viewBox="0 0 10 10"
              refX="9"
              refY="5"
              markerWidth="7"
              markerHeight="7"
              orient="auto-start-reverse"
            >
              <path d="M0,0 L10,5 L0,10 z" className="fill-slate-500" />
            </marker>
          </defs>
          {drawing.groups.map((g) => (
            <g key={g.id} data-group={g.id}>
              <rect
                x={g.x - g.width / 2}
                y={g.y - g.height / 2}
                width={g.width}
                height={g.height}
                rx={10}
                className="fill-none stroke-slate-300"
                strokeDasharray="2 3"
              />
              <text
                x={g.x - g.width / 2 + 8}
                y={g.y - g.height / 2 + 14}
                className="fill-slate-600 text-[11px]"
              >
                {g.label}
              </text>
            </g>
          ))}
          {drawing.edges.map((e) => (
            <path
              key={`${e.from}-${e.to}-${e.conditional}`}
              data-edge={`${e.from}→${e.to}`}
              data-conditional={e.conditional ? "true" : "false"}
              d={e.points.map((p, i) => `${i === 0 ? "M" : "L"}${p.x},${p.y}`).join(" ")}
              className="fill-none stroke-slate-500"
              strokeWidth={1.25}
              strokeDasharray={e.conditional ? "5 4" : undefined}
              markerEnd="url(#agent-graph-arrow)"
            />
          ))}
          {drawing.nodes.map((n) => {
            const state = stateOf(n);
            const terminal = n.kind !== "node";
            return (
              <g key={n.id} data-node={n.id} data-state={state} data-asks={n.asks ? "true" : "false"}>
                <rect
                  x={n.x - n.width / 2}
                  y={n.y - n.height / 2}
                  width={n.width}
                  height={n.height}
                  rx={terminal ? n.height / 2 : 8}
                  className={
                    state === "current"
                      ? "fill-indigo-600 stroke-indigo-800"
                      : state === "next"
                        ? "fill-amber-100 stroke-amber-700"
                        : terminal
                          ? "fill-slate-200 stroke-slate-400"
                          : "fill-white stroke-slate-400"
                  }
                  strokeWidth={state === "other" ? 1 : 2.5}
                  strokeDasharray={n.asks ? "6 3" : undefined}
                />
                {n.asks && <circle cx={n.x - n.width / 2 + 10} cy={n.y} r={4} className="fill-amber-600" />}
                <text
                  x={n.asks ? n.x + 5 : n.x}
                  y={n.y + 4}
                  textAnchor="middle"
                  className={`text-[12px] ${state === "current" ? "fill-white font-semibold" : "fill-slate-900"}`}
                >
                  {n.label}
                </text>
              </g>
            );
          })}
        </svg>
      </section>
      <p className="flex flex-wrap gap-x-4 gap-y-1 text-xs text-slate-700">
        <span>
          <span
            aria-hidden="true"
            className="mr-1 inline-block h-3 w-3 rounded-sm bg-indigo-600 align-middle"
          />
          wrote this step
        </span>
        <span>
          <span
            aria-hidden="true"
            className="mr-1 inline-block h-3 w-3 rounded-sm border-2 border-amber-700 bg-amber-100 align-middle"
          />
          runs next
        </span>
        <span>
          <span
            aria-hidden="true"
            className="mr-1 inline-block h-2 w-2 rounded-full bg-amber-600 align-middle"
          />
          dashed box with a dot: asks a person
        </span>
        <span>dashed line: a conditional edge</span>
      </p>
    </figure>
  );
}

function labelOf(drawing: GraphDrawing) {
  return (id: string) => drawing.nodes.find((n) => n.id === id)?.label ?? id;
}
