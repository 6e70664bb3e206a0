import { randomUUID } from "node:crypto";
import { Command } from "@langchain/langgraph";
import { type Backend, openBackend } from "@/e2e/support/backends";
import { recordAnswers } from "@/e2e/support/receipts";
import { ScriptedChatModel } from "@/lib/agents/kit/scripted-model";
import { DrizzleCheckpointSaver } from "@/lib/checkpoint/saver";
import type { AgentGraph } from "@/lib/runtime/agents/registry";
import { seedDemoOrders } from "@/lib/shop/demo-orders";
import { listRefundsForOrder } from "@/lib/shop/refunds";
import { orderSupportAgent } from "./agent";
import { buildOrderSupportGraph } from "./graph";

/*
 * The LangChain `createAgent` agent on our checkpointer in a real database: its standard review interrupt reads as a
 * tool_review question, the middleware resumes from the answer in its own format, and the credit is recorded once.
 */
describe.each<Backend>(["pglite", "postgres"])("the order-support agent on %s", (kind) => {
  let backend: Awaited<ReturnType<typeof openBackend>>;
  let graph: AgentGraph;

  beforeAll(async () => {
    backend = await openBackend(kind);
    await seedDemoOrders({ db: backend.database.db });
    graph = orderSupportAgent.build({
      checkpointer: new DrizzleCheckpointSaver(backend.database.sql),
      db: backend.database.db,
    });
  });
  afterAll(async () => {
    await backend?.close();
  });

  async function runTo(input: unknown, config: { configurable: { thread_id: string } }) {
    for await (const _ of await graph.stream(input, config)) {
      // run to the next pause or the end
    }
    return graph.getState(config);
  }

  it("looks the order up, asks a person about the credit, runs the edited call once and says what it recorded", async () => {
    const config = { configurable: { thread_id: randomUUID() } };
    const paused = await runTo(
      orderSupportAgent.input({
        messageId: randomUUID(),
        text: "My headphones arrived scratched",
        ticket: { message: "My headphones arrived scratched", orderRef: "ORD-1002" },
      }),
      config,
    );
    const [raised] = paused.tasks.flatMap((t) => t.interrupts);
    const parsed = orderSupportAgent.interrupts.parse(raised?.value);
    if (!parsed.ok) throw new Error(parsed.error);
    expect(parsed.action).toBe("tool_review");
    expect(parsed.payload).toMatchObject({
      format: "langchain",
      requests: [
        {
          name: "issue_store_credit",
          args: { orderId: "ORD-1002", amountCents: 2490 },
          allowed: ["approve", "edit", "reject"],
        },
      ],
    });
    expect(orderSupportAgent.context(paused.values as Record<string, unknown>)).toEqual({
      orderId: "ORD-1002",
      customerName: "Lars Jensen",
      currency: "EUR",
    });
    const payload = parsed.payload;
    // Bounds from the tool's schema, checked on the answer.
    const edit = (amountCents: unknown) => ({
      decisions: [
        {
          type: "edit",
          editedAction: {
            name: "issue_store_credit",
            args: { orderId: "ORD-1002", amountCents, reason: "Scratched" },
          },
        },
      ],
    });
    expect(orderSupportAgent.interrupts.validate(payload, edit(50_000))).toMatchObject({ ok: false });
    expect(orderSupportAgent.interrupts.validate(payload, edit("lots"))).toMatchObject({ ok: false });
    expect(orderSupportAgent.interrupts.validate(payload, { decisions: [] })).toMatchObject({ ok: false });
    const answer = orderSupportAgent.interrupts.validate(payload, edit(1500));
    if (!answer.ok) throw new Error(answer.error);

    // The review's receipt, as the ledger writes it: the credit is recorded only against what it authorized.
    await recordAnswers({
      db: backend.database.db,
      agent: orderSupportAgent,
      threadId: config.configurable.thread_id,
      answers: { [raised!.id!]: [raised?.value, answer.answer] },
    });
    const done = await runTo(new Command({ resume: { [raised!.id!]: answer.answer } }), config);
    expect(done.next).toEqual([]);
    const refunds = (await listRefundsForOrder({ db: backend.database.db, orderId: "ORD-1002" })).filter(
      (r) => r.threadId === config.configurable.thread_id,
    );
    expect(refunds.map((r) => [r.amountCents, r.method])).toEqual([[1500, "store_credit"]]);
    const last = (done.values as { messages: { content: unknown }[] }).messages.at(-1);
    expect(String(last?.content)).toContain("€15.00 has been queued");

    // A fork from the question would reach the credit again: said before the fork; from the end, nothing to say.
    const db = backend.database.db;
    const threadId = config.configurable.thread_id;
    const fromQuestion = await orderSupportAgent.effects({
      db,
      threadId,
      values: paused.values as Record<string, unknown>,
    });
    expect(fromQuestion.map((w) => w.code)).toEqual(["side_effect:refund"]);
    expect(fromQuestion[0]?.message).toContain("€15.00");
    expect(
      await orderSupportAgent.effects({ db, threadId, values: done.values as Record<string, unknown> }),
    ).toEqual([]);

    // The same answer again (a second click reaching the graph, a replayed step) records nothing more.
    await runTo(new Command({ resume: { [raised!.id!]: answer.answer } }), config);
    const again = (await listRefundsForOrder({ db: backend.database.db, orderId: "ORD-1002" })).filter(
      (r) => r.threadId === config.configurable.thread_id,
    );
    expect(again).toHaveLength(1);
  });

  it("a scripted model that asks for more than is left: approved in full, the tool records only what the order allows", async () => {
    // The kit's scripted model in place of the offline one: two credits for one €24.98 order in one batch, the
    // second more than what the first leaves. The person approves both; the ledger, not the model, has the last word.
    const scripted = buildOrderSupportGraph({
      checkpointer: new DrizzleCheckpointSaver(backend.database.sql),
      db: backend.database.db,
      model: new ScriptedChatModel([
        {
          calls: [
            {
              name: "issue_store_credit",
              args: { orderId: "ORD-1001", amountCents: 2000, reason: "Chipped" },
            },
            { name: "issue_store_credit", args: { orderId: "ORD-1001", amountCents: 1000, reason: "Again" } },
          ],
        },
        "Done.",
      ]),
    });
    const config = { configurable: { thread_id: randomUUID() } };
    for await (const _ of await scripted.stream(
      orderSupportAgent.input({
        messageId: randomUUID(),
        text: "My mugs arrived chipped",
        ticket: { message: "My mugs arrived chipped", orderRef: "ORD-1001" },
      }) as Parameters<typeof scripted.stream>[0],
      config,
    )) {
      // to the question
    }
    const [raised] = (await scripted.getState(config)).tasks.flatMap((t) => t.interrupts);
    const parsed = orderSupportAgent.interrupts.parse(raised?.value);
    if (!parsed.ok) throw new Error(parsed.error);
    const answer = { decisions: [{ type: "approve" }, { type: "approve" }] };
    await recordAnswers({
      db: backend.database.db,
      agent: orderSupportAgent,
      threadId: config.configurable.thread_id,
      answers: { [raised!.id!]: [raised?.value, answer] },
    });
    const before = await listRefundsForOrder({ db: backend.database.db, orderId: "ORD-1001" });
    const left = 2498 - before.reduce((sum, r) => sum + r.amountCents, 0);
    for await (const _ of await scripted.stream(new Command({ resume: { [raised!.id!]: answer } }), config)) {
      // to the end
    }
    const mine = (await listRefundsForOrder({ db: backend.database.db, orderId: "ORD-1001" })).filter(
      (r) => r.threadId === config.configurable.thread_id,
    );
    // Never more than the order had left, whatever the model asked for and the person approved.
    expect(mine.reduce((sum, r) => sum + r.amountCents, 0)).toBeLessThanOrEqual(left);
    // The two calls run side by side: whichever the ledger takes first is recorded, the other only if it still fits.
    expect(mine.length).toBe(left >= 3000 ? 2 : left >= 1000 ? 1 : 0);
  });

  it("a rejected call records nothing and the reply claims nothing", async () => {
    const config = { configurable: { thread_id: randomUUID() } };
    const paused = await runTo(
      orderSupportAgent.input({
        messageId: randomUUID(),
        text: "Late delivery, ORD-1003",
        ticket: { message: "Late delivery, ORD-1003" },
      }),
      config,
    );
    const [raised] = paused.tasks.flatMap((t) => t.interrupts);
    const done = await runTo(
      new Command({
        resume: { [raised!.id!]: { decisions: [{ type: "reject", message: "Delivery was on time" }] } },
      }),
      config,
    );
    expect(done.next).toEqual([]);
    const refunds = (await listRefundsForOrder({ db: backend.database.db, orderId: "ORD-1003" })).filter(
      (r) => r.threadId === config.configurable.thread_id,
    );
    expect(refunds).toEqual([]);
    const last = (done.values as { messages: { content: unknown }[] }).messages.at(-1);
    expect(String(last?.content)).toContain("will not add store credit");
  });
});
