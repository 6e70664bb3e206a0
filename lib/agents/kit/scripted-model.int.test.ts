import { randomUUID } from "node:crypto";
import type { BaseMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { Command } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { z } from "zod";
import { type Backend, openBackend } from "@/e2e/support/backends";
import { DrizzleCheckpointSaver } from "@/lib/checkpoint/saver";
import { validateAnswer } from "@/lib/contract/questions";
import { QUESTION_KINDS } from "@/lib/contract/questions/kinds";
import {
  encodeDecisions,
  readStandardInterrupt,
  sentBackToModel,
  toolReviewActs,
} from "@/lib/contract/questions/tool-review";
import { reviewToolCalls } from "./reviewed-tools";
import { type ScriptContext, ScriptedChatModel } from "./scripted-model";

/*
 * The kit's scripted model in a real createAgent on our checkpointer (issue 53), and partial approval inside one
 * batch as LangChain allows it: the model asks for three vouchers in one turn. Approved all, all three run. Two
 * approved and the third rejected: LangChain's middleware (JS) runs none of the batch — the approved calls included —
 * and asks the model again with the rejection; the contract says the same (the answer acts on nothing, authorizes
 * nothing, and its summary says the approvals did not run), so no ledger or receipt claims a call that never ran.
 * Two threads run side by side on one model without taking each other's answers.
 */

const vouchers = (customers: string[]) => ({
  calls: customers.map((customer) => ({ name: "send_voucher", args: { customer, amountCents: 500 } })),
});

/** The script: a batch of vouchers first, then a sentence saying which were sent and which refused (from the tools). */
function script({ messages, turn }: ScriptContext) {
  if (turn === 0) {
    const text = String(messages.findLast((m) => m.getType() === "human")?.content ?? "");
    return vouchers(text.split(",").map((s) => s.trim()));
  }
  const results = messages.filter((m): m is ToolMessage => m.getType() === "tool") as ToolMessage[];
  const sent = results.filter((r) => r.status !== "error").map((r) => String(r.content));
  const refused = results.filter((r) => r.status === "error").map((r) => String(r.content));
  return `Sent: ${sent.join("; ") || "none"}. Refused: ${refused.join("; ") || "none"}.`;
}

describe.each<Backend>(["pglite", "postgres"])("the scripted model and partial approval on %s", (kind) => {
  let backend: Awaited<ReturnType<typeof openBackend>>;
  beforeAll(async () => {
    backend = await openBackend(kind);
  }, 120_000);
  afterAll(async () => {
    await backend?.close();
  });

  function agent(sent: string[]) {
    const sendVoucher = tool(
      async ({ customer, amountCents }) => {
        sent.push(customer);
        return `voucher of ${amountCents} for ${customer}`;
      },
      {
        name: "send_voucher",
        description: "Send a goodwill voucher to a customer.",
        schema: z.object({ customer: z.string(), amountCents: z.number().int().positive() }),
      },
    );
    return createAgent({
      model: new ScriptedChatModel(script),
      tools: [sendVoucher],
      middleware: [reviewToolCalls({ send_voucher: true }, { tools: [sendVoucher] })],
      checkpointer: new DrizzleCheckpointSaver(backend.database.checkpointSql),
    }).graph;
  }

  async function toQuestion(graph: ReturnType<typeof agent>, threadId: string, text: string) {
    const config = { configurable: { thread_id: threadId } };
    await graph.invoke({ messages: [{ role: "user", content: text }] }, config);
    const [raised] = (await graph.getState(config)).tasks.flatMap((t) => t.interrupts ?? []);
    const payload = readStandardInterrupt(raised?.value);
    if (!raised?.id || !payload) throw new Error("no reviewed batch was asked");
    return { id: raised.id, payload, config };
  }

  it("asks one question for the batch; two approved and one rejected: LangChain runs none, and the contract says so", async () => {
    const sent: string[] = [];
    const graph = agent(sent);
    const { id, payload, config } = await toQuestion(graph, randomUUID(), "Ada, Bo, Cy");
    expect(payload.requests.map((r) => [r.name, r.args.customer])).toEqual([
      ["send_voucher", "Ada"],
      ["send_voucher", "Bo"],
      ["send_voucher", "Cy"],
    ]);
    expect(payload.requests.map((r) => r.allowed)).toEqual(
      Array(3).fill(expect.arrayContaining(["approve", "reject"])),
    );

    // Partial approval, as the console sends it: checked against the question, then in LangChain's own format.
    const decisions = [
      { type: "approve" as const },
      { type: "approve" as const },
      { type: "reject" as const, message: "Cy had a voucher last week." },
    ];
    const answer = encodeDecisions(payload, decisions);
    const checked = validateAnswer(payload, answer);
    expect(checked.ok).toBe(true);
    // A batch answered for two calls of three is refused: every call gets its decision.
    expect(validateAnswer(payload, encodeDecisions(payload, decisions.slice(0, 2))).ok).toBe(false);

    // What the contract says of this answer: it lets nothing run, so it authorizes nothing and acts on nothing.
    expect(sentBackToModel(answer)).toBe(true);
    expect(toolReviewActs(answer)).toBe(false);
    expect(
      QUESTION_KINDS.tool_review.summarize(answer as never, "EUR", (t: unknown) => `“${String(t)}”`),
    ).toBe(
      "Approved (not run: the batch went back to the agent); Approved (not run: the batch went back to the agent); Rejected: “Cy had a voucher last week.”",
    );

    const final = await graph.invoke(new Command({ resume: { [id]: answer } }), config);
    // What LangChain did: none of the batch ran; the model read the rejection and answered it.
    expect(sent).toEqual([]);
    const messages = final.messages as BaseMessage[];
    const results = messages.filter((m) => m.getType() === "tool") as ToolMessage[];
    expect(results.map((r) => [r.status ?? "success", String(r.content)])).toEqual([
      ["error", "Cy had a voucher last week."],
    ]);
    expect(String(messages.at(-1)?.content)).toBe("Sent: none. Refused: Cy had a voucher last week..");
    // The model's messages are said to be scripted, with stable ids from their turn.
    expect(messages.filter((m) => m.getType() === "ai").map((m) => m.id)).toEqual([
      "scripted-0",
      "scripted-1",
    ]);
  });

  it("runs every call of a batch approved in full", async () => {
    const sent: string[] = [];
    const graph = agent(sent);
    const { id, payload, config } = await toQuestion(graph, randomUUID(), "Gus, Hal, Ivy");
    const answer = encodeDecisions(
      payload,
      payload.requests.map(() => ({ type: "approve" as const })),
    );
    expect(toolReviewActs(answer)).toBe(true);
    const final = await graph.invoke(new Command({ resume: { [id]: answer } }), config);
    expect(sent).toEqual(["Gus", "Hal", "Ivy"]);
    expect(String((final.messages as BaseMessage[]).at(-1)?.content)).toBe(
      "Sent: voucher of 500 for Gus; voucher of 500 for Hal; voucher of 500 for Ivy. Refused: none.",
    );
  });

  it("keeps each thread's turns apart on one model: two threads interleaved get their own answers", async () => {
    const sent: string[] = [];
    const graph = agent(sent);
    const one = await toQuestion(graph, randomUUID(), "Dee");
    const two = await toQuestion(graph, randomUUID(), "Eli, Fay");
    expect(one.payload.requests.map((r) => r.args.customer)).toEqual(["Dee"]);
    expect(two.payload.requests.map((r) => r.args.customer)).toEqual(["Eli", "Fay"]);
    const approveAll = (p: typeof one.payload) =>
      encodeDecisions(
        p,
        p.requests.map(() => ({ type: "approve" as const })),
      );
    const endTwo = await graph.invoke(
      new Command({ resume: { [two.id]: approveAll(two.payload) } }),
      two.config,
    );
    const endOne = await graph.invoke(
      new Command({ resume: { [one.id]: approveAll(one.payload) } }),
      one.config,
    );
    expect(String((endOne.messages as BaseMessage[]).at(-1)?.content)).toBe(
      "Sent: voucher of 500 for Dee. Refused: none.",
    );
    expect(String((endTwo.messages as BaseMessage[]).at(-1)?.content)).toBe(
      "Sent: voucher of 500 for Eli; voucher of 500 for Fay. Refused: none.",
    );
    expect(sent.sort()).toEqual(["Dee", "Eli", "Fay"]);
  });
});
