import { randomUUID } from "node:crypto";
import { toJsonSchema } from "@langchain/core/utils/json_schema";
import { Command } from "@langchain/langgraph";
import { type Backend, openBackend } from "@/e2e/support/backends";
import { orderSupportAgent } from "@/lib/agents/order-support/agent";
import { buildOrderSupportGraph } from "@/lib/agents/order-support/graph";
import { orderSupportTools } from "@/lib/agents/order-support/tools";
import { listCheckpointHistory } from "@/lib/checkpoint/history";
import { DrizzleCheckpointSaver } from "@/lib/checkpoint/saver";
import { validateAnswer } from "@/lib/contract/questions";
import { createThread } from "@/lib/db/queries/threads";
import { seedDemoOrders } from "@/lib/shop/demo-orders";
import { reviewToolCalls } from "./reviewed-tools";

/*
 * A `createAgent` reviewed as LangChain's docs write it — `interruptOn: { issue_store_credit: true }`, no schema —
 * still gives the reviewer a form: the kit fills each reviewed tool's argument schema in from the tool itself, so the
 * question carries it (the console generates the edit form from it) and an edit is checked against it. Run on a real
 * createAgent (the order-support graph with its offline model) to the question.
 */

describe.each<Backend>(["pglite"])("a tool reviewed with `true` on %s", (kind) => {
  let backend: Awaited<ReturnType<typeof openBackend>>;
  beforeAll(async () => {
    backend = await openBackend(kind);
    await seedDemoOrders({ db: backend.database.db });
  });
  afterAll(async () => {
    await backend?.close();
  });

  async function askedWith(middleware: ReturnType<typeof reviewToolCalls>, { sealed = false } = {}) {
    const graph = buildOrderSupportGraph({
      checkpointer: new DrizzleCheckpointSaver(backend.database.checkpointSql),
      db: backend.database.db,
      middleware: [middleware],
    });
    // A thread filed for its customer is sealed under their key (issue 49); one the database does not know is not.
    const threadId = sealed
      ? (
          await createThread({
            db: backend.database.db,
            title: "Scratched",
            customerMessage: "My headphones arrived scratched",
            orderRef: "ORD-1002",
            subjectEmail: "headphones@example.com",
          })
        ).id
      : randomUUID();
    const config = { configurable: { thread_id: threadId } };
    const input = orderSupportAgent.input({
      messageId: randomUUID(),
      text: "My headphones arrived scratched",
      ticket: { message: "My headphones arrived scratched", orderRef: "ORD-1002" },
    });
    for await (const _ of await graph.stream(input as Parameters<typeof graph.stream>[0], config)) {
      // to the question
    }
    const [raised] = (await graph.getState(config)).tasks.flatMap((t) => t.interrupts ?? []);
    const parsed = orderSupportAgent.interrupts.parse(raised?.value);
    if (!parsed.ok) throw new Error(parsed.error);
    return {
      raw: raised?.value as { reviewConfigs: Record<string, unknown>[] },
      payload: parsed.payload,
      /** Approve the reviewed call and run the thread to its end. */
      async approve() {
        const resume = new Command({ resume: { [raised!.id!]: { decisions: [{ type: "approve" }] } } });
        for await (const _ of await graph.stream(resume, config)) {
          // to the end
        }
        return config.configurable.thread_id;
      },
    };
  }

  it("carries the tool's own argument schema, so the edit form is generated and edits are checked", async () => {
    const tools = orderSupportTools(backend.database.db);
    const credit = tools.find((t) => t.name === "issue_store_credit");
    const { raw, payload } = await askedWith(reviewToolCalls({ issue_store_credit: true }, { tools }));
    expect(raw.reviewConfigs[0]).toMatchObject({
      actionName: "issue_store_credit",
      allowedDecisions: ["approve", "edit", "reject"],
      argsSchema: toJsonSchema(credit!.schema as Parameters<typeof toJsonSchema>[0]),
    });
    const request = (payload as { requests: { argsSchema?: { properties?: object } }[] }).requests[0];
    expect(Object.keys(request?.argsSchema?.properties ?? {})).toEqual(
      expect.arrayContaining(["orderId", "amountCents"]),
    );
    // An edit that breaks the tool's schema is refused, naming the field.
    const edited = validateAnswer(payload, {
      decisions: [
        { type: "edit", editedAction: { name: "issue_store_credit", args: { orderId: "ORD-1002" } } },
      ],
    });
    expect(edited.ok).toBe(false);
    expect(JSON.stringify(edited)).toContain("amountCents");
  });

  it.each([
    ["in clear", false],
    ["sealed", true],
  ])(
    "the history names the tool's step by its tool, not by LangGraph's push path (%s)",
    async (_, sealed) => {
      const tools = orderSupportTools(backend.database.db);
      const asked = await askedWith(reviewToolCalls({ issue_store_credit: true }, { tools }), { sealed });
      const threadId = await asked.approve();
      const types = await backend.database.sql.query<{ type: string }>(
        "SELECT type FROM checkpoint.checkpoint_writes WHERE thread_id = $1",
        [threadId],
      );
      expect(types.some((t) => t.type.startsWith("sealed:"))).toBe(sealed);
      const page = await listCheckpointHistory({ sql: backend.database.checkpointSql, threadId });
      const names = page.entries.flatMap((e) => [...e.writtenBy, ...e.writes.map((w) => w.node)]);
      expect(names).toContain("issue_store_credit");
      expect(names.filter((n) => n.includes("__pregel_push"))).toEqual([]);
    },
  );

  it("without the tools it is as LangChain leaves it: no schema (the reviewer would edit raw JSON)", async () => {
    const { raw } = await askedWith(reviewToolCalls({ issue_store_credit: true }));
    expect(raw.reviewConfigs[0]?.argsSchema).toBeUndefined();
  });
});
