/*
 * The agent's graph as the history page draws it: laid out on the server (lib/runtime/views/graph-drawing.ts), so the
 * page ships coordinates, not a layout library. Types only.
 */

export interface DrawnNode {
  id: string;
  label: string;
  kind: "start" | "end" | "node";
  /** Raises interrupts: a person is asked here (the agent's `interruptNodes`). */
  asks: boolean;
  /** The subgraph it belongs to (its id in `groups`), if any. */
  group: string | null;
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface DrawnEdge {
  from: string;
  to: string;
  /** Taken only when a routing function says so. */
  conditional: boolean;
  points: { x: number; y: number }[];
}

export interface GraphDrawing {
  agent: string;
  version: string;
  width: number;
  height: number;
  nodes: DrawnNode[];
  /**
   * Subgraphs: the box around their nodes, inside the box of the subgraph that holds them (`parent`), outermost
   * first (the order they are drawn in).
   */
  groups: {
    id: string;
    label: string;
    parent: string | null;
    x: number;
    y: number;
    width: number;
    height: number;
  }[];
  edges: DrawnEdge[];
}
