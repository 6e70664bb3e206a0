import { ScriptedChatModel } from "@hitl/agent-kit";
import { Command, MemorySaver } from "@langchain/langgraph";
import { buildInvoiceGraph, invoiceDisputeAgent } from "./agent";
import { invoiceScript } from "./model";

/*
 * The package's own tests, written with the console's agent kit only: the scripted model drives the graph (its own
 * script, and another written down per turn), on LangGraph's in-memory saver. The console's generated suites
 * (e2e/agents/) run the same agent through every route, principal and both databases.
 */

async function drain(graph: ReturnType<typeof buildInvoiceGraph>, input: unknown, threadId: string) {
  const config = { configurable: { thread_id: threadId } };
  for await (const _ of await graph.stream(input as never, config)) {
    // to the next pause or the end
  }
  return graph.getState(config);
}

const said = (values: unknown) =>
  String((values as { messages: { content: unknown }[] }).messages.at(-1)?.content ?? "");

describe("invoice_dispute (an agent package)", () => {
  it("looks the invoice up and asks a person to review the credit note, in the console's terms", async () => {
    const graph = buildInvoiceGraph({ checkpointer: new MemorySaver() });
    const state = await drain(
      graph,
      invoiceDisputeAgent.input({ messageId: "m1", text: "INV-2001 charges a day twice.", ticket: {} }),
      "t1",
    );
    const [raised] = state.tasks.flatMap((t) => t.interrupts ?? []);
    const parsed = invoiceDisputeAgent.interrupts.parse(raised?.value);
    if (!parsed.ok) throw new Error(parsed.error);
    expect(parsed.payload).toMatchObject({
      action: "tool_review",
      requests: [{ name: "issue_credit_note", args: { invoiceId: "INV-2001", amountCents: 24_000 } }],
    });
    // `{ issue_credit_note: true }` as LangChain's docs write it: the review still knows the tool's argument schema.
    const [call] = (
      parsed.payload as { requests: { allowed: string[]; argsSchema?: { properties?: object } }[] }
    ).requests;
    expect(call?.allowed).toEqual(["approve", "edit", "reject"]);
    expect(Object.keys(call?.argsSchema?.properties ?? {}).sort()).toEqual([
      "amountCents",
      "invoiceId",
      "note",
    ]);
  });

  it("an approved credit note: the reply says it was approved and not yet issued, no more", async () => {
    const graph = buildInvoiceGraph({ checkpointer: new MemorySaver() });
    const paused = await drain(
      graph,
      invoiceDisputeAgent.input({ messageId: "m1", text: "The late fee on INV-2002 is wrong.", ticket: {} }),
      "t2",
    );
    const [raised] = paused.tasks.flatMap((t) => t.interrupts ?? []);
    const done = await drain(
      graph,
      new Command({ resume: { [raised!.id!]: { decisions: [{ type: "approve" }] } } }),
      "t2",
    );
    expect(said(done.values)).toBe(
      "Thank you for your patience. A colleague approved a credit note of €19.00 against INV-2002. It is not issued yet: we will write to you when it is.",
    );
  });

  it("a rejection reaches the model with the reviewer's words", async () => {
    const graph = buildInvoiceGraph({ checkpointer: new MemorySaver() });
    const paused = await drain(
      graph,
      invoiceDisputeAgent.input({ messageId: "m1", text: "INV-2001 is wrong.", ticket: {} }),
      "t3",
    );
    const [raised] = paused.tasks.flatMap((t) => t.interrupts ?? []);
    const answer = { decisions: [{ type: "reject", message: "The day was worked twice." }] };
    const done = await drain(graph, new Command({ resume: { [raised!.id!]: answer } }), "t3");
    expect(said(done.values)).toContain("we will not issue a credit note");
    expect(said(done.values)).toContain("The day was worked twice.");
  });

  it("a script written down per turn: no invoice named, the agent asks for it and no question is raised", async () => {
    const graph = buildInvoiceGraph({
      checkpointer: new MemorySaver(),
      model: new ScriptedChatModel(["Which invoice is this about? Please give its number, like INV-2001."]),
    });
    const state = await drain(
      graph,
      invoiceDisputeAgent.input({ messageId: "m1", text: "Hello", ticket: {} }),
      "t4",
    );
    expect(state.tasks.flatMap((t) => t.interrupts ?? [])).toEqual([]);
    expect(said(state.values)).toContain("Which invoice");
    // The agent's own script says the same for a message without an invoice number.
    expect(invoiceScript({ threadId: "x", turn: 0, messages: [] })).toContain("Which invoice");
  });
});
