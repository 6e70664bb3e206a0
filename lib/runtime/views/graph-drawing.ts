import "server-only";
import dagre from "@dagrejs/dagre";
import type { DrawnEdge, DrawnNode, GraphDrawing } from "@/lib/contract/views/graph";
import { singleton } from "@/lib/platform/singleton";
import { describeGraph } from "../agents/graph-structure";
import type { AgentDefinition } from "../agents/registry";

/*
 * The agent's graph as the history page draws it (issue 34): read from the compiled graph of one agent version
 * (LangGraph's own description, `getGraphAsync({ xray: true })`: nodes, edges, conditional edges, subgraphs opened up)
 * and laid out by dagre, so no agent needs drawing code and nothing is placed by hand. Computed on the server, once
 * per version per process: the page ships coordinates, not a layout library.
 */

/** The drawing's shapes are the browser's (lib/contract/views/graph.ts). */
export type { DrawnEdge, DrawnNode, GraphDrawing };

/** The drawing of an agent version (cached: a version's graph never changes). */
export function graphDrawing(agent: AgentDefinition): Promise<GraphDrawing> {
  const drawings = singleton("graph-drawings", () => new Map<string, Promise<GraphDrawing>>());
  const key = `${agent.id}@${agent.version}`;
  let drawing = drawings.get(key);
  if (!drawing) {
    drawing = draw(agent);
    drawing.catch(() => drawings.delete(key));
    drawings.set(key, drawing);
  }
  return drawing;
}

const NODE_HEIGHT = 36;
/** Room at the top of a subgraph's box for its name. */
const GROUP_LABEL = 20;
/** Wide enough for the label at the page's 12 px monospace-ish text, with padding. */
const widthOf = (label: string) => Math.max(72, Math.round(label.length * 7.2) + 34);

function labelOf(id: string): string {
  if (id === "__start__") return "start";
  if (id === "__end__") return "end";
  return id.split(":").at(-1) ?? id;
}

async function draw(agent: AgentDefinition): Promise<GraphDrawing> {
  const { described } = await describeGraph(agent, { xray: true });
  const ids = Object.keys(described.nodes);
  const asks = new Set(agent.interruptNodes);
  // A node `sub:inner` (xray) sits inside the subgraph `sub`.
  const groupOf = (id: string) => (id.includes(":") ? id.slice(0, id.lastIndexOf(":")) : null);
  // Every subgraph a node sits in, outermost first: `a:b:inner` sits in `a:b`, which sits in `a`.
  const ancestors = (id: string): string[] => {
    const group = groupOf(id);
    return group ? [...ancestors(group), group] : [];
  };
  const groups = [...new Set(ids.flatMap(ancestors))].sort(
    (a, b) => a.split(":").length - b.split(":").length || a.localeCompare(b),
  );

  const layout = new dagre.graphlib.Graph({ compound: groups.length > 0, multigraph: true });
  layout.setGraph({ rankdir: "TB", nodesep: 28, ranksep: 44, marginx: 12, marginy: 12 });
  layout.setDefaultEdgeLabel(() => ({}));
  for (const group of groups) {
    layout.setNode(`group:${group}`, { label: group, paddingTop: GROUP_LABEL });
    const parent = groupOf(group);
    if (parent) layout.setParent(`group:${group}`, `group:${parent}`);
  }
  for (const id of ids) {
    const label = labelOf(id);
    layout.setNode(id, { label, width: widthOf(label), height: NODE_HEIGHT });
    const group = groupOf(id);
    if (group) layout.setParent(id, `group:${group}`);
  }
  described.edges.forEach((e, i) => {
    layout.setEdge(e.source, e.target, {}, `e${i}`);
  });
  dagre.layout(layout);

  const box = layout.graph();
  return {
    agent: agent.id,
    version: agent.version,
    width: Math.ceil(box.width ?? 0),
    height: Math.ceil(box.height ?? 0),
    nodes: ids.map((id) => {
      const n = layout.node(id);
      return {
        id,
        label: labelOf(id),
        kind: id === "__start__" ? "start" : id === "__end__" ? "end" : "node",
        asks: asks.has(id) || asks.has(labelOf(id)),
        group: groupOf(id),
        x: Math.round(n.x),
        y: Math.round(n.y),
        width: n.width,
        height: n.height,
      };
    }),
    groups: groups.map((group) => {
      const n = layout.node(`group:${group}`);
      return {
        id: group,
        label: labelOf(group),
        parent: groupOf(group),
        x: n.x,
        y: n.y,
        width: n.width,
        height: n.height,
      };
    }),
    edges: described.edges.map((e, i) => ({
      from: e.source,
      to: e.target,
      conditional: e.conditional === true,
      points: (layout.edge({ v: e.source, w: e.target, name: `e${i}` }).points ?? []).map(
        (p: { x: number; y: number }) => ({
          x: Math.round(p.x),
          y: Math.round(p.y),
        }),
      ),
    })),
  };
}
