import { estimatedUsage } from "@/lib/agents/kit/offline-usage";
import "server-only";
import { setTimeout as sleep } from "node:timers/promises";
import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import { BaseChatModel, type BaseChatModelParams } from "@langchain/core/language_models/chat_models";
import { AIMessage, AIMessageChunk, type BaseMessage } from "@langchain/core/messages";
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs";
import { classifyByRules } from "./classify-rules";
import { CLASSIFY_TASK, REPLY_TASK, readReplyFacts, readTask } from "./prompts";
import { renderReplyBody } from "./reply-templates";

/** What the offline model says to a prompt it was not built for. */
const UNKNOWN_TASK_ANSWER =
  "I am the offline demo model: I can only classify customer messages and write replies for the refund agent.";

/** Options of the offline model. */
export interface OfflineChatModelFields extends BaseChatModelParams {
  /** Pause between streamed pieces, so a demo shows text arriving; 0 (the default) in tests. */
  tokenDelayMs?: number;
}

/**
 * A deterministic chat model for development, demos and tests: no network, no key. It answers the refund agent's
 * prompts (by their `TASK:` line) with the rule-based classification as JSON, or the reply template for the facts
 * given, and streams its answer in word-sized chunks so LangGraph's "messages" stream mode sees real token chunks.
 */
export class OfflineChatModel extends BaseChatModel {
  private readonly tokenDelayMs: number;

  constructor(fields: OfflineChatModelFields = {}) {
    super(fields);
    this.tokenDelayMs = fields.tokenDelayMs ?? 0;
  }

  static lc_name() {
    return "OfflineChatModel";
  }

  _llmType(): string {
    return "offline";
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const text = answerPrompt(messages);
    const usage = estimatedUsage(messages, text);
    return {
      generations: [
        {
          text,
          message: new AIMessage({
            content: text,
            usage_metadata: usage,
            response_metadata: { estimated: true },
          }),
        },
      ],
    };
  }

  async *_streamResponseChunks(
    messages: BaseMessage[],
    options: this["ParsedCallOptions"],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    const text = answerPrompt(messages);
    for (const piece of splitIntoTokens(text)) {
      options.signal?.throwIfAborted();
      if (this.tokenDelayMs > 0) await sleep(this.tokenDelayMs);
      const chunk = new ChatGenerationChunk({ text: piece, message: new AIMessageChunk({ content: piece }) });
      yield chunk;
      await runManager?.handleLLMNewToken(piece, undefined, undefined, undefined, undefined, { chunk });
    }
    // What the answer cost, estimated (as a provider reports it: on a last, empty chunk).
    yield new ChatGenerationChunk({
      text: "",
      message: new AIMessageChunk({
        content: "",
        usage_metadata: estimatedUsage(messages, text),
        response_metadata: { estimated: true },
      }),
    });
  }
}

/** The offline answer to a prompt, chosen by its task. */
export function answerPrompt(messages: BaseMessage[]): string {
  switch (readTask(messages)) {
    case CLASSIFY_TASK: {
      const customer = messages.findLast((m) => m.getType() === "human")?.text ?? "";
      const c = classifyByRules(customer);
      const requestedAmount = c.requestedCents === null ? null : c.requestedCents / 100;
      return JSON.stringify({ intent: c.intent, reason: c.reason, orderRef: c.orderRef, requestedAmount });
    }
    case REPLY_TASK: {
      const facts = readReplyFacts(messages);
      if (facts) return renderReplyBody(facts);
      break;
    }
  }
  return UNKNOWN_TASK_ANSWER;
}

/** Word-sized pieces (each word with the whitespace after it); joined, they give back `text` exactly. */
export function splitIntoTokens(text: string): string[] {
  // Three words a piece: visibly streaming, without paying LangChain's per-token callback cost forty times a reply.
  return text.match(/(?:\S+\s*){1,3}|\s+/g) ?? [];
}
