import type { BaseMessage, UsageMetadata } from "@langchain/core/messages";

/**
 * What an offline model reports it spent: an estimate (about four tokens for three words), so token budgets, metrics
 * and the console's spend work without a provider. Labelled: `estimated: true` in the response metadata.
 */
export function estimatedUsage(prompt: readonly BaseMessage[], answer: string): UsageMetadata {
  const input = prompt.reduce(
    (n, m) => n + tokensOf(typeof m.content === "string" ? m.content : JSON.stringify(m.content)),
    0,
  );
  const output = tokensOf(answer);
  return { input_tokens: input, output_tokens: output, total_tokens: input + output };
}

function tokensOf(text: string): number {
  const words = text.split(/\s+/).filter(Boolean).length;
  return Math.ceil((words * 4) / 3);
}
