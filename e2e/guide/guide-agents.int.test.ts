import { randomUUID } from "node:crypto";
import { Command } from "@langchain/langgraph";
import { type Backend, openBackend } from "@/e2e/support/backends";
import { DrizzleCheckpointSaver } from "@/lib/checkpoint/saver";
import { structureHash } from "@/lib/runtime/agents/graph-structure";
import type { AgentDefinition, AgentGraph } from "@/lib/runtime/agents/registry";
import { inboxReplyAgent } from "./agents/inbox-reply/agent";
import { nestedReviewAgent } from "./agents/nested-review/agent";

/*
 * The guide's fixture agents on our checkpointer, both databases: an agent-inbox HumanInterrupt and an interrupt raised
 * inside a subgraph each read as a tool_review question, resume from an answer in their own format, and fork from
 * before the question (which is then asked again). guide.int.test.ts adds them to a copy of the app exactly as the
 * README says and runs them over HTTP and in Chromium.
 */
const FIXTURES: {
  agent: AgentDefinition;
  format: string;
  approve: unknown;
  other: unknown;
  approved: string;
  otherwise: string;
}[] = [
  {
    agent: inboxReplyAgent as AgentDefinition,
    format: "agent_inbox",
    approve: [{ type: "accept", args: null }],
    other: [{ type: "response", args: "Mention the tracking number." }],
    approved: "Reviewed by a person (approved)",
    otherwise: "Reviewed by a person (answered)",
  },
  {
    agent: nestedReviewAgent as AgentDefinition,
    format: "langchain",
    approve: { decisions: [{ type: "approve" }] },
    other: { decisions: [{ type: "reject", message: "Still waiting for the parcel." }] },
    approved: "A person closed the ticket.",
    otherwise: "A person kept the ticket open.",
  },
];

describe.each(FIXTURES.map((f) => [f.agent.id, f] as const))("guide fixture %s", (_id, fixture) => {
  it("declares the structure hash of its graph", async () => {
    expect(await structureHash(fixture.agent)).toBe(fixture.agent.structureHash);
  });

  describe.each<Backend>(["pglite", "postgres"])("on %s", (kind) => {
    let backend: Awaited<ReturnType<typeof openBackend>>;
    let graph: AgentGraph;
    beforeAll(async () => {
      backend = await openBackend(kind);
      graph = fixture.agent.build({
        checkpointer: new DrizzleCheckpointSaver(backend.database.sql),
        db: backend.database.db,
      });
    });
    afterAll(async () => {
      await backend?.close();
    });

    const drain = async (input: unknown, config: Parameters<AgentGraph["stream"]>[1]) => {
      for await (const _ of await graph.stream(input, config)) {
        // to the next pause or the end
      }
    };

    it("pauses with a standard request, resumes from its own answer, and a fork from before asks again", async () => {
      const thread = randomUUID();
      const config = { configurable: { thread_id: thread } };
      await drain(
        fixture.agent.input({
          messageId: randomUUID(),
          text: "Where is my parcel?",
          ticket: { message: "Where is my parcel?" },
        }),
        config,
      );
      const paused = await graph.getState(config);
      const [raised] = paused.tasks.flatMap((t) => t.interrupts ?? []);
      const parsed = fixture.agent.interrupts.parse(raised?.value);
      if (!parsed.ok) throw new Error(parsed.error);
      expect(parsed.payload).toMatchObject({ action: "tool_review", format: fixture.format });
      expect(fixture.agent.interrupts.validate(parsed.payload, fixture.approve)).toMatchObject({ ok: true });
      expect(fixture.agent.actsOnIt(parsed.payload, fixture.approve)).toBe(true);
      expect(fixture.agent.actsOnIt(parsed.payload, fixture.other)).toBe(false);

      // A "refresh": the state read again names the same question.
      const again = await graph.getState(config);
      expect(again.tasks.flatMap((t) => t.interrupts ?? []).map((i) => i.id)).toEqual([raised!.id]);

      await drain(new Command({ resume: { [raised!.id!]: fixture.approve } }), config);
      const done = await graph.getState(config);
      expect(done.next).toEqual([]);
      const said = (v: unknown) =>
        String((v as { messages: { content: unknown }[] }).messages.at(-1)?.content);
      expect(said(done.values)).toContain(fixture.approved);

      // Fork from the checkpoint that asked: the question is asked again under a new id; answer it otherwise.
      const at = paused.config;
      await drain(null, at as Parameters<AgentGraph["stream"]>[1]);
      const forked = await graph.getState({ configurable: { thread_id: thread } });
      const [asked] = forked.tasks.flatMap((t) => t.interrupts ?? []);
      expect(asked).toBeDefined();
      await drain(new Command({ resume: { [asked!.id!]: fixture.other } }), {
        configurable: { thread_id: thread },
      });
      expect(said((await graph.getState(config)).values)).toContain(fixture.otherwise);
    });
  });
});
