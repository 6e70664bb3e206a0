import "server-only";
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { Serialized } from "@langchain/core/load/serializable";
import type { LLMResult } from "@langchain/core/outputs";
import { ROOT_CONTEXT, type Span, trace } from "@opentelemetry/api";
import { boundedLabel, metrics } from "../../platform/observability/metrics";
import { failSpan, tracer } from "../../platform/observability/tracing";

interface Open {
  /** The span this callback run opened, if it opened one. */
  span?: Span;
  /** The nearest span at or above this callback run: where children go. */
  nearest: Span;
  /** For a model call: its label and start, for the metrics. */
  llm?: { model: string; started: number };
}

/**
 * LangChain callbacks of one run, turned into spans and metrics: a span per graph node (named `node <name>`) and per
 * chat-model call (`llm <model>`, with token counts), nested by LangChain's own parent ids under the run's span; the
 * model calls also feed `hitl_llm_*`. The runtime passes it to `graph.stream`, so it sees every agent's graph
 * without knowing any. Everything else LangChain reports (internal sequences, channel writes) only passes its parent
 * through. Handlers are awaited (they are synchronous and cheap) so span times are the real ones.
 */
export class RunTraceHandler extends BaseCallbackHandler {
  name = "hitl-run-trace";
  override awaitHandlers = true;
  private readonly open = new Map<string, Open>();

  /** Spans are made only for a recorded run span (tracing exported); the model metrics are kept either way. */
  private readonly recording: boolean;

  constructor(private readonly runSpan: Span) {
    // Not recording, chains make no spans: LangChain need not tell it of them (one call per chain, channel write and
    // node of the graph). Model calls always feed the metrics. It handles no tools, retrievers or custom events.
    super({
      ignoreChain: !runSpan.isRecording(),
      ignoreAgent: true,
      ignoreRetriever: true,
      ignoreCustomEvent: true,
    });
    this.recording = runSpan.isRecording();
  }

  private parentOf(parentRunId: string | undefined): Span {
    return (parentRunId && this.open.get(parentRunId)?.nearest) || this.runSpan;
  }

  // The callback manager calls this as (chain, inputs, runId, parentRunId, tags, metadata, runType, runName):
  // the declared parameter names disagree with that order, so the positions are what counts here.
  override handleChainStart(
    _chain: Serialized,
    _inputs: unknown,
    runId: string,
    parentRunId?: string,
    _tags?: string[],
    metadata?: Record<string, unknown>,
    _runType?: string,
    runName?: string,
  ): void {
    if (!this.recording) return;
    const parent = this.parentOf(parentRunId);
    const node = metadata?.langgraph_node;
    // A graph node is the chain LangGraph names after it; nested chains of the same node are not nodes again.
    const isNode = typeof node === "string" && runName === node && !this.isNodeSpan(parent, node);
    if (!isNode) {
      this.open.set(runId, { nearest: parent });
      return;
    }
    const span = tracer().startSpan(
      `node ${node}`,
      {
        attributes: {
          "langgraph.node": node,
          ...(typeof metadata?.langgraph_step === "number"
            ? { "langgraph.step": metadata.langgraph_step }
            : {}),
        },
      },
      trace.setSpan(ROOT_CONTEXT, parent),
    );
    nodeNames.set(span, node);
    this.open.set(runId, { span, nearest: span });
  }

  private isNodeSpan(span: Span, node: string): boolean {
    return nodeNames.get(span) === node;
  }

  override handleChainEnd(_outputs: unknown, runId: string): void {
    this.end(runId);
  }

  override handleChainError(error: Error, runId: string): void {
    // An interrupt is LangGraph's way to pause, not a failure.
    const open = this.open.get(runId);
    if (open?.span && error?.name !== "GraphInterrupt") failSpan(open.span, error);
    this.end(runId);
  }

  override handleChatModelStart(
    llm: Serialized,
    _messages: unknown,
    runId: string,
    parentRunId?: string,
    extraParams?: Record<string, unknown>,
    _tags?: string[],
    metadata?: Record<string, unknown>,
  ): void {
    const invocation = extraParams?.invocation_params as
      | { model?: unknown; model_name?: unknown }
      | undefined;
    const raw = metadata?.ls_model_name ?? invocation?.model ?? invocation?.model_name ?? llm.id?.at(-1);
    const model = boundedLabel(typeof raw === "string" ? raw.toLowerCase() : raw, "unknown");
    const span = this.recording
      ? tracer().startSpan(
          `llm ${model}`,
          { attributes: { "gen_ai.request.model": model } },
          trace.setSpan(ROOT_CONTEXT, this.parentOf(parentRunId)),
        )
      : undefined;
    this.open.set(runId, { span, nearest: span ?? this.runSpan, llm: { model, started: performance.now() } });
  }

  override handleLLMEnd(output: LLMResult, runId: string): void {
    const open = this.open.get(runId);
    if (open?.llm) {
      const m = metrics();
      m.llmLatency.observe({ model: open.llm.model }, (performance.now() - open.llm.started) / 1000);
      const usage = tokenUsage(output);
      if (usage.prompt > 0) m.llmTokens.inc({ model: open.llm.model, type: "prompt" }, usage.prompt);
      if (usage.completion > 0)
        m.llmTokens.inc({ model: open.llm.model, type: "completion" }, usage.completion);
      open.span?.setAttributes({
        "gen_ai.usage.input_tokens": usage.prompt,
        "gen_ai.usage.output_tokens": usage.completion,
      });
    }
    this.end(runId);
  }

  override handleLLMError(error: Error, runId: string): void {
    const open = this.open.get(runId);
    if (open?.llm) metrics().llmErrors.inc({ model: open.llm.model });
    if (open?.span) failSpan(open.span, error);
    this.end(runId);
  }

  private end(runId: string): void {
    const open = this.open.get(runId);
    this.open.delete(runId);
    open?.span?.end();
  }

  /** End whatever is still open (the run was stopped mid-node). */
  closeAll(): void {
    for (const runId of [...this.open.keys()]) this.end(runId);
  }
}

const nodeNames = new WeakMap<Span, string>();

/** Prompt and completion tokens of a model call, as the provider reported them (0 when it did not). */
export function tokenUsage(output: LLMResult): { prompt: number; completion: number } {
  const reported = output.llmOutput?.tokenUsage as
    | { promptTokens?: number; completionTokens?: number }
    | undefined;
  if (reported && (reported.promptTokens || reported.completionTokens)) {
    return { prompt: reported.promptTokens ?? 0, completion: reported.completionTokens ?? 0 };
  }
  let prompt = 0;
  let completion = 0;
  for (const generation of output.generations.flat()) {
    const usage = (
      generation as { message?: { usage_metadata?: { input_tokens?: number; output_tokens?: number } } }
    ).message?.usage_metadata;
    prompt += usage?.input_tokens ?? 0;
    completion += usage?.output_tokens ?? 0;
  }
  return { prompt, completion };
}
