import { graphStructure, structureHash } from "@/lib/runtime/agents/graph-structure";
import { getAgent, registeredAgentKeys } from "@/lib/runtime/agents/registry";
import "@/lib/agents/index";

/*
 * The guard that a declared version was bumped: every registered agent version's graph must hash to the structure it
 * declares. Changed a node, an edge, an interrupt point or a state channel? Then this fails: keep the old definition
 * in the agent's versions folder, bump `version`, and put the new hash below into the new definition.
 */
describe("graph versions", () => {
  it.each(registeredAgentKeys())("%s matches its declared structure hash", async (key) => {
    const [id, version] = key.split("@") as [string, string];
    const agent = getAgent(id, version);
    const actual = await structureHash(agent);
    expect(actual, `${key}: ${JSON.stringify(await graphStructure(agent))}`).toBe(agent.structureHash);
  });

  it("reads nodes, edges, interrupt points and channels (a renamed node changes the hash)", async () => {
    const refund = getAgent("refund");
    const structure = await graphStructure(refund);
    expect(structure.nodes).toContain("human_review");
    expect(structure.edges).toContain("lookup_order?→check_policy");
    expect(structure.channels).toContain("decision");
    const renamed = { ...refund, interruptNodes: ["review_refund"] };
    expect(await structureHash(renamed)).not.toBe(await structureHash(refund));
  });
});
