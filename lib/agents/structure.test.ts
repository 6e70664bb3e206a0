import { tool } from "@langchain/core/tools";
import { humanInTheLoopMiddleware } from "langchain";
import { z } from "zod";
import { reviewToolCalls } from "@/lib/agents/kit/reviewed-tools";
import { buildOrderSupportGraph, REVIEWED_TOOLS } from "@/lib/agents/order-support/graph";
import { orderSupportTools, storeCreditArgs } from "@/lib/agents/order-support/tools";
import type { AppDb } from "@/lib/db/open";
import { graphStructure, structureHash } from "@/lib/runtime/agents/graph-structure";
import { type AgentDefinition, getAgent, registeredAgentKeys } from "@/lib/runtime/agents/registry";
import { checkDeclaredHash } from "@/lib/runtime/agents/verify-agents";
import "@/lib/agents/index";

/** order_support@1 as declared, built with other tools or another review middleware (the same change, in place). */
function orderSupportWith(change: {
  tools?: (tools: ReturnType<typeof orderSupportTools>) => ReturnType<typeof orderSupportTools>;
  middleware?: ReturnType<typeof reviewToolCalls>;
}): AgentDefinition {
  const declared = getAgent("order_support", "1");
  return {
    ...declared,
    build: ({ checkpointer, db }) =>
      buildOrderSupportGraph({
        checkpointer,
        db,
        tools: (change.tools ?? ((t) => t))(orderSupportTools(db as AppDb)),
        ...(change.middleware ? { middleware: [change.middleware] } : {}),
      }),
  } as AgentDefinition;
}

/** A copy of a tool under another name or argument schema (what it does is the same). */
function retool(
  original: ReturnType<typeof orderSupportTools>[number],
  fields: { name?: string; schema?: z.ZodObject },
) {
  return tool(async () => "", {
    name: fields.name ?? original.name,
    description: original.description,
    schema: fields.schema ?? (original.schema as z.ZodObject),
  }) as unknown as ReturnType<typeof orderSupportTools>[number];
}

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

  it("reads the question kinds, the tools with their argument schemas and the review settings", async () => {
    const structure = await graphStructure(getAgent("order_support"));
    expect(structure.questions).toEqual(["tool_review"]);
    expect(structure.tools.map((t) => t.split(":")[0])).toEqual(["issue_store_credit", "lookup_order"]);
    expect(structure.review).toHaveLength(1);
    expect(structure.review[0]).toContain('"allowedDecisions":["approve","edit","reject"]');
    // The unchanged build hashes as declared: the variants below differ by their one change alone.
    expect(await checkDeclaredHash(orderSupportWith({}))).toBeNull();
  });

  const credit = (tools: ReturnType<typeof orderSupportTools>) =>
    tools.find((t) => t.name === "issue_store_credit") as ReturnType<typeof orderSupportTools>[number];
  const others = (tools: ReturnType<typeof orderSupportTools>) =>
    tools.filter((t) => t.name !== "issue_store_credit");
  const changes: [string, Parameters<typeof orderSupportWith>[0]][] = [
    ["a tool renamed", { tools: (t) => [...others(t), retool(credit(t), { name: "grant_store_credit" })] }],
    [
      "a tool's argument schema changed",
      {
        tools: (t) => [
          ...others(t),
          retool(credit(t), { schema: storeCreditArgs.extend({ amountCents: z.number().int().min(1) }) }),
        ],
      },
    ],
    [
      "a tool's allowed decisions changed",
      {
        middleware: reviewToolCalls({
          issue_store_credit: {
            ...REVIEWED_TOOLS.issue_store_credit,
            allowedDecisions: ["approve", "reject"],
          },
        }),
      },
    ],
    ["a tool no longer reviewed", { middleware: reviewToolCalls({}) }],
    [
      "the reviewer's wording changed",
      {
        middleware: reviewToolCalls({
          issue_store_credit: { ...REVIEWED_TOOLS.issue_store_credit, description: "Approve the credit?" },
        }),
      },
    ],
  ];
  it.each(changes)("%s in place (no version bump): the version is refused", async (_name, change) => {
    const refused = await checkDeclaredHash(orderSupportWith(change));
    expect(refused).toMatchObject({
      agent: "order_support",
      version: "1",
      declared: "sha256:24fe21741d37ae88",
    });
    expect(refused?.actual).toMatch(/^sha256:[0-9a-f]{16}$/);
    expect(refused?.actual).not.toBe(refused?.declared);
  });

  it("LangChain's raw review middleware hides its settings: the version is refused as unbuildable", async () => {
    const raw = humanInTheLoopMiddleware({
      interruptOn: REVIEWED_TOOLS,
    }) as unknown as ReturnType<typeof reviewToolCalls>;
    const refused = await checkDeclaredHash(orderSupportWith({ middleware: raw }));
    expect(refused).toMatchObject({ agent: "order_support", actual: "unbuildable" });
  });
});
