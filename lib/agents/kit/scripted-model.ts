import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import { estimatedUsage } from "./offline-usage";

/*
 * A scripted offline chat model for a team's tests and demos: what the model "says" at each turn of a thread is
 * written down in advance — texts and tool calls — and nothing is shared between threads. The turn is counted from
 * the conversation the model is given (the AI messages already in it), not from a queue: a thread's answers do not
 * depend on what other threads asked, a step replayed after a restart says the same again, and two threads may run
 * side by side. (LangChain's fake models keep one response queue for every caller: a server running several threads
 * hands one thread's answer to another.) Deterministic: ids of messages and tool calls come from the turn.
 */

/** One tool call the model makes: the tool's name and its arguments (and an id, else one from the turn). */
export interface ScriptedCall {
  name: string;
  args: Record<string, unknown>;
  id?: string;
}

/** What the model answers at one turn: words, tool calls (several make one batch), or both. */
export type ScriptedTurn = string | { say?: string; calls?: ScriptedCall[] };

/** What a script may read to decide a turn: the thread's id (when run in a graph) and the conversation so far. */
export interface ScriptContext {
  threadId: string | null;
  messages: BaseMessage[];
  /** The turn being answered: 0 for the first answer of the thread, 1 for the next … */
  turn: number;
}

/**
 * A thread's script: the turns in order (after the last one, the last is said again), or a function of the thread
 * that answers one turn (it may read the tool results so far, as a real model would).
 */
export type Script = ScriptedTurn[] | ((context: ScriptContext) => ScriptedTurn);

/** The thread a model call runs for, from the graph's config (`configurable.thread_id`), when there is one. */
function currentThreadId(): string | null {
  const config = AsyncLocalStorageProviderSingleton.getRunnableConfig() as
    | { configurable?: { thread_id?: unknown } }
    | undefined;
  const id = config?.configurable?.thread_id;
  return typeof id === "string" ? id : null;
}

/** The answer a script gives to a conversation. */
export function scriptedAnswer(script: Script, messages: BaseMessage[], threadId: string | null): AIMessage {
  const turn = messages.filter((m) => m.getType() === "ai").length;
  const step =
    typeof script === "function"
      ? script({ threadId, messages, turn })
      : (script[Math.min(turn, script.length - 1)] ?? "");
  const { say = "", calls = [] } = typeof step === "string" ? { say: step } : step;
  return new AIMessage({
    id: `scripted-${turn}`,
    content: say,
    tool_calls: calls.map((c, i) => ({
      id: c.id ?? `call_${turn}_${i}_${c.name}`,
      name: c.name,
      args: c.args,
      type: "tool_call" as const,
    })),
  });
}

/**
 * The scripted model. `script` is one script for every thread, or a function giving each thread its own (by its id).
 * It may be bound to tools (createAgent binds them) and ignores them: the script says which to call.
 */
export class ScriptedChatModel extends BaseChatModel {
  private readonly scriptFor: (threadId: string | null) => Script;

  private readonly thinkMsPerWord: number;

  /**
   * `thinkMsPerWord`: a pause per word of each answer before it is given, so a demo shows the agent at work and a test
   * can land a kill or a second message inside a run. Default: `OFFLINE_TOKEN_DELAY_MS`, as the console's own offline
   * models (0 when unset).
   */
  constructor(
    script: Script | { perThread: (threadId: string | null) => Script },
    {
      thinkMsPerWord = Number(process.env.OFFLINE_TOKEN_DELAY_MS ?? 0) || 0,
    }: { thinkMsPerWord?: number } = {},
  ) {
    super({});
    this.scriptFor =
      typeof script === "object" && !Array.isArray(script) ? script.perThread : () => script as Script;
    this.thinkMsPerWord = Math.max(0, thinkMsPerWord);
  }

  static lc_name() {
    return "ScriptedChatModel";
  }

  _llmType(): string {
    return "scripted-offline";
  }

  bindTools(): this {
    return this;
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const threadId = currentThreadId();
    const message = scriptedAnswer(this.scriptFor(threadId), messages, threadId);
    const words = String(message.content).split(/\s+/).filter(Boolean).length;
    if (this.thinkMsPerWord > 0 && words > 0) {
      await new Promise((resolve) => setTimeout(resolve, this.thinkMsPerWord * words));
    }
    message.usage_metadata = estimatedUsage(messages, String(message.content));
    // Said of every answer: it was scripted, not written by a model.
    message.response_metadata = { ...message.response_metadata, estimated: true, scripted: true };
    return { generations: [{ text: String(message.content), message }] };
  }
}
