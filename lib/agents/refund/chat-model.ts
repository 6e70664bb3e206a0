import "server-only";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { ChatOpenAI } from "@langchain/openai";
import { env } from "@/lib/platform/env";
import { OfflineChatModel } from "./offline-model";

/** Where and which OpenAI-compatible model to call. */
export interface OpenAiChatModelOptions {
  apiKey: string;
  /** An OpenAI-compatible endpoint, e.g. `http://127.0.0.1:8000/v1`; default: OpenAI's. */
  baseURL?: string;
  model: string;
  /** Retries on transient errors; tests pass 0 so a broken fake fails fast. */
  maxRetries?: number;
  /** How long one call may take (ms) before it is abandoned as timed out (and retried). */
  timeoutMs?: number;
}

/** A streaming `ChatOpenAI` for the refund agent (the classifier and the reply writer). */
export function createOpenAiChatModel({
  apiKey,
  baseURL,
  model,
  maxRetries,
  timeoutMs,
}: OpenAiChatModelOptions): ChatOpenAI {
  return new ChatOpenAI({
    apiKey,
    model,
    // No temperature: reasoning models reject anything but their default.
    streaming: true,
    maxRetries,
    ...(timeoutMs ? { timeout: timeoutMs } : {}),
    configuration: baseURL ? { baseURL } : {},
  });
}

/**
 * The chat model the environment asks for: `ChatOpenAI` when `OPENAI_API_KEY` is set (with `OPENAI_BASE_URL` and
 * `OPENAI_MODEL`), otherwise the offline deterministic model, so the app runs with no key and no network.
 */
export function getChatModel(): BaseChatModel {
  if (env.OPENAI_API_KEY) {
    return createOpenAiChatModel({
      apiKey: env.OPENAI_API_KEY,
      baseURL: env.OPENAI_BASE_URL,
      model: env.OPENAI_MODEL,
      maxRetries: env.OPENAI_MAX_RETRIES,
      timeoutMs: env.MODEL_TIMEOUT_MS,
    });
  }
  return new OfflineChatModel({ tokenDelayMs: env.OFFLINE_TOKEN_DELAY_MS });
}
