import "@/lib/agents/index";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { graphStructure } from "../agents/graph-structure";
import { type AgentDefinition, findAgent, registeredAgentKeys } from "../agents/registry";
import { graphDrawing } from "./graph-drawing";

/*
 * The history page's drawing of each registered agent's graph (generated over the registry: a new agent is drawn and
 * checked with no case of its own). Everything the compiled graph says is on it — every node, every edge with its
 * conditional mark, every node that asks a person — and the layout is readable: no two boxes overlap, nothing lies
 * outside the picture, every edge has a path.
 */

// Every registered version, not only the current one: a thread pinned to an older version is drawn from its own graph.
const agents = registeredAgentKeys().map((key) => {
  const [id = "", version = ""] = key.split("@");
  const agent = findAgent(id, version);
  if (!agent) throw new Error(`no agent ${key}`);
  return [key, agent] as const;
});

describe.each(agents)("the drawing of %s", (_id, agent) => {
  it("has every node and edge of the compiled graph, and marks the nodes that ask a person", async () => {
    const [drawing, structure] = await Promise.all([graphDrawing(agent), graphStructure(agent)]);
    expect(drawing.nodes.map((n) => n.id).sort()).toEqual(
      expect.arrayContaining(structure.nodes.filter((n) => !n.includes(":"))),
    );
    const drawn = new Set(drawing.edges.map((e) => `${e.from}${e.conditional ? "?" : ""}→${e.to}`));
    for (const edge of structure.edges) expect(drawn, edge).toContain(edge);
    // Without subgraphs (opened up in the drawing, so their node becomes their inner ones), the two are equal: nothing
    // drawn that the graph lacks.
    if (!drawing.nodes.some((n) => n.id.includes(":"))) {
      expect(drawing.nodes.map((n) => n.id).sort()).toEqual(structure.nodes);
      expect([...drawn].sort()).toEqual(structure.edges);
    }
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

/*
 * Subgraphs drawn nested: a graph with a subgraph inside a subgraph (no registered agent has one yet, so a real
 * LangGraph graph built here). Every node sits inside the box of its subgraph, every subgraph's box inside the box of
 * the one that holds it, and no node covers a box's name.
 */
describe("a graph with nested subgraphs", () => {
  const State = Annotation.Root({
    steps: Annotation<string[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }),
  });
  const step = (name: string) => async () => ({ steps: [name] });
  const build = () => {
    const innermost = new StateGraph(State)
      .addNode("ask", step("ask"))
      .addNode("log", step("log"))
      .addEdge(START, "ask")
      .addEdge("ask", "log")
      .addEdge("log", END)
      .compile();
    const review = new StateGraph(State)
      .addNode("check", step("check"))
      .addNode("approval", innermost)
      .addEdge(START, "check")
      .addEdge("check", "approval")
      .addEdge("approval", END)
      .compile();
    return new StateGraph(State)
      .addNode("prepare", step("prepare"))
      .addNode("review", review)
      .addNode("finish", step("finish"))
      .addEdge(START, "prepare")
      .addEdge("prepare", "review")
      .addEdge("review", "finish")
      .addEdge("finish", END)
      .compile();
  };
  const agent = {
    id: "nested_fixture",
    version: "1",
    interruptNodes: ["ask"],
    build,
  } as unknown as AgentDefinition;

  it("draws each subgraph's nodes inside its box, and the inner box inside the outer one", async () => {
    const drawing = await graphDrawing(agent);
    const inside = (
      inner: { x: number; y: number; width: number; height: number },
      outer: { x: number; y: number; width: number; height: number },
    ) =>
      inner.x - inner.width / 2 >= outer.x - outer.width / 2 &&
      inner.x + inner.width / 2 <= outer.x + outer.width / 2 &&
      inner.y - inner.height / 2 >= outer.y - outer.height / 2 &&
      inner.y + inner.height / 2 <= outer.y + outer.height / 2;
    const groups = new Map(drawing.groups.map((g) => [g.id, g]));
    expect([...groups.keys()]).toEqual(["review", "review:approval"]);
    expect(groups.get("review:approval")?.parent).toBe("review");
    expect(groups.get("review:approval")?.label).toBe("approval");
    const outer = groups.get("review");
    const innerBox = groups.get("review:approval");
    if (!outer || !innerBox) throw new Error("no boxes");
    expect(inside(innerBox, outer)).toBe(true);

    const ask = drawing.nodes.find((n) => n.label === "ask");
    expect(ask?.group).toBe("review:approval");
    expect(ask?.asks).toBe(true);
    for (const node of drawing.nodes) {
      const box = node.group ? groups.get(node.group) : undefined;
      if (node.group) expect(box && inside(node, box), `${node.id} in ${node.group}`).toBe(true);
      // Outside its own boxes, a node is outside every other box too, and never on a box's name.
      for (const g of drawing.groups) {
        const own = node.group === g.id || node.group?.startsWith(`${g.id}:`);
        if (!own) expect(inside(node, g), `${node.id} not in ${g.id}`).toBe(false);
        const nameBand = { x: g.x, y: g.y - g.height / 2 + 10, width: g.width, height: 20 };
        const overlaps =
          Math.abs(node.x - nameBand.x) < (node.width + nameBand.width) / 2 &&
          Math.abs(node.y - nameBand.y) < (node.height + nameBand.height) / 2;
        expect(overlaps, `${node.id} covers the name of ${g.id}`).toBe(false);
      }
    }
    for (const e of drawing.edges) expect(e.points.length, `${e.from}→${e.to}`).toBeGreaterThanOrEqual(2);
  });
});
