import "@/lib/agents";
import { listAgents } from "./agent";
import { graphDrawing } from "./graph-drawing";
import { graphStructure } from "./graph-structure";

/*
 * The history page's drawing of each registered agent's graph (generated over the registry: a new agent is drawn and
 * checked with no case of its own). Everything the compiled graph says is on it — every node, every edge with its
 * conditional mark, every node that asks a person — and the layout is readable: no two boxes overlap, nothing lies
 * outside the picture, every edge has a path.
 */

const agents = listAgents().map((agent) => [agent.id, agent] as const);

describe.each(agents)("the drawing of %s", (_id, agent) => {
  it("has every node and edge of the compiled graph, and marks the nodes that ask a person", async () => {
    const [drawing, structure] = await Promise.all([graphDrawing(agent), graphStructure(agent)]);
    expect(drawing.nodes.map((n) => n.id).sort()).toEqual(
      expect.arrayContaining(structure.nodes.filter((n) => !n.includes(":"))),
    );
    const drawn = new Set(drawing.edges.map((e) => `${e.from}${e.conditional ? "?" : ""}→${e.to}`));
    for (const edge of structure.edges) expect(drawn, edge).toContain(edge);
    for (const node of agent.interruptNodes)
      expect(drawing.nodes.find((n) => n.id === node)?.asks, node).toBe(true);
    expect(drawing.nodes.filter((n) => n.asks).length).toBe(agent.interruptNodes.length);
    expect(drawing.nodes.find((n) => n.id === "__start__")?.kind).toBe("start");
  });

  it("is laid out readably: inside the picture, no overlapping boxes, a path for every edge", async () => {
    const drawing = await graphDrawing(agent);
    expect(drawing.width).toBeGreaterThan(0);
    for (const n of drawing.nodes) {
      expect(n.x - n.width / 2, n.id).toBeGreaterThanOrEqual(0);
      expect(n.y - n.height / 2, n.id).toBeGreaterThanOrEqual(0);
      expect(n.x + n.width / 2, n.id).toBeLessThanOrEqual(drawing.width);
      expect(n.y + n.height / 2, n.id).toBeLessThanOrEqual(drawing.height);
    }
    for (const [i, a] of drawing.nodes.entries()) {
      for (const b of drawing.nodes.slice(i + 1)) {
        const apart =
          Math.abs(a.x - b.x) >= (a.width + b.width) / 2 || Math.abs(a.y - b.y) >= (a.height + b.height) / 2;
        expect(apart, `${a.id} / ${b.id}`).toBe(true);
      }
    }
    for (const e of drawing.edges) expect(e.points.length, `${e.from}→${e.to}`).toBeGreaterThanOrEqual(2);
  });
});
