import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { INVALID_SPAN_CONTEXT, type Span, trace } from "@opentelemetry/api";
import { countHeard } from "@/e2e/support/heard";
import { RunTraceHandler } from "./graph-callbacks";

/*
 * The run's callback handler on a real LangGraph graph (two nodes, a model call in each). Not recording (no OTLP
 * export, the default), LangChain tells it of the model calls only, which feed the metrics; recording, it hears the
 * chains too, to make the node spans.
 */

class OkModel extends BaseChatModel {
  constructor() {
    super({});
  }
  _llmType() {
    return "ok";
  }
  async _generate(_messages: BaseMessage[]): Promise<ChatResult> {
    return { generations: [{ text: "ok", message: new AIMessage("ok") }] };
  }
}

function twoNodes() {
  const model = new OkModel();
  const State = Annotation.Root({
    said: Annotation<string[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }),
  });
  const say = async () => ({ said: [String((await model.invoke("go")).content)] });
  return new StateGraph(State)
    .addNode("first", say)
    .addNode("second", say)
    .addEdge(START, "first")
    .addEdge("first", "second")
    .addEdge("second", END)
    .compile();
}

/** A span that says it records (the handler only asks, and parents its own spans under it). */
function recordingSpan(): Span {
  const span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);
  return Object.assign(Object.create(span), { isRecording: () => true });
}

async function heardBy(handler: RunTraceHandler) {
  const heard = countHeard(handler, [
    ["handleChainStart", "chains"],
    ["handleChatModelStart", "models"],
    ["handleLLMEnd", "modelEnds"],
  ]);
  const out = await twoNodes().invoke({ said: [] }, { callbacks: [handler] });
  expect(out.said).toEqual(["ok", "ok"]);
  return heard;
}

describe("the run's trace handler", () => {
  test("not recording, it is told of the model calls only", async () => {
    expect(await heardBy(new RunTraceHandler(trace.wrapSpanContext(INVALID_SPAN_CONTEXT)))).toEqual({
      chains: 0,
      models: 2,
      modelEnds: 2,
    });
  });

  test("recording, it hears the graph's chains as well", async () => {
    const heard = await heardBy(new RunTraceHandler(recordingSpan()));
    expect(heard.chains).toBeGreaterThanOrEqual(3);
    expect(heard.models).toBe(2);
  });
});
