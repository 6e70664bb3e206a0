import "server-only";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { BaseCheckpointSaver, StateSnapshot } from "@langchain/langgraph";
import { z } from "zod";
import { AppError } from "@/lib/contract/errors";
import type { AgentDefinition, AgentGraph } from "./agent-definition";

/*
 * A thread whose agent version this process cannot serve — refused at start (its graph is not what it declares), or
 * not deployed at all — is still read: its state as its checkpoint stores it, its questions as they were asked (in
 * the console's safe fallback view: the contract that would read them is not here), its ledger, its history. Nothing
 * about it can be run or decided here: every such attempt is 409 `conflict:graph_version`, said in words.
 */

/** LangGraph's own channels (bookkeeping, not the agent's state). */
const isOwnChannel = (name: string) => name.startsWith("__") || name.startsWith("branch:");

/** The refusal for anything but reading. */
function notServed(agentId: string, version: string): AppError {
  return new AppError(
    "conflict:graph_version",
    `This server does not run ${agentId} version ${version}: the thread can be read and closed, not run or decided here.`,
    { agent: agentId, threadVersion: version, newer: false },
  );
}

/** A graph that only reads what the checkpointer stores (no nodes, no channels of its own). */
function storedStateGraph(checkpointer: BaseCheckpointSaver, agentId: string, version: string): AgentGraph {
  return {
    async getState(config: RunnableConfig): Promise<StateSnapshot> {
      const tuple = await checkpointer.getTuple(config);
      if (!tuple) {
        return {
          values: {},
          next: [],
          tasks: [],
          config,
          metadata: undefined,
          createdAt: undefined,
        } as StateSnapshot;
      }
      const values = Object.fromEntries(
        Object.entries(tuple.checkpoint.channel_values ?? {}).filter(([name]) => !isOwnChannel(name)),
      );
      // The questions the head waits on: interrupts written by its tasks and not answered by a resume.
      const writes = tuple.pendingWrites ?? [];
      const resumed = new Set(writes.filter(([, channel]) => channel === "__resume__").map(([task]) => task));
      const byTask = new Map<string, { id: string; value: unknown }[]>();
      for (const [task, channel, value] of writes) {
        if (channel !== "__interrupt__" || resumed.has(task)) continue;
        const list = byTask.get(task) ?? [];
        for (const item of Array.isArray(value) ? value : [value]) {
          const i = item as { id?: unknown; value?: unknown } | null;
          if (typeof i?.id === "string") list.push({ id: i.id, value: i.value });
        }
        byTask.set(task, list);
      }
      const tasks = [...byTask].map(([id, interrupts]) => ({ id, name: "", path: [], interrupts }));
      return {
        values,
        next: [],
        tasks,
        config: tuple.config,
        metadata: tuple.metadata,
        createdAt: tuple.checkpoint.ts,
        parentConfig: tuple.parentConfig,
      } as unknown as StateSnapshot;
    },
    async updateState(): Promise<RunnableConfig> {
      throw notServed(agentId, version);
    },
    async stream(): Promise<AsyncIterable<unknown>> {
      throw notServed(agentId, version);
    },
  };
}

/** The definition that reads a thread of `agentId` at `version` when this process has no version of that agent. */
export function storedReader(agentId: string, version: string): AgentDefinition {
  return {
    id: agentId,
    title: agentId,
    description: `Version ${version} of ${agentId}, not served by this server: read only.`,
    version,
    structureHash: "sha256:not-served",
    interruptNodes: [],
    asks: [],
    build: ({ checkpointer }) => storedStateGraph(checkpointer, agentId, version),
    intake: { schema: z.object({ message: z.string() }) },
    input: () => {
      throw notServed(agentId, version);
    },
    interrupts: {
      parse: () => ({
        ok: false,
        error: `${agentId} version ${version} is not served here: shown as it was asked`,
      }),
      validate: () => ({ ok: false, error: `${agentId} version ${version} is not served here` }),
      responseSchema: () => ({}),
      summarize: (raw) => {
        const title = (raw as { title?: unknown } | null)?.title;
        return {
          title: typeof title === "string" ? title : "A question",
          orderId: null,
          customerName: null,
          amountCents: null,
          currency: null,
        };
      },
      authorizes: () => [],
    },
    fork: { editable: z.strictObject({}).partial(), editableFields: [], asNodes: [], markEdited: () => ({}) },
    effects: async () => [],
    policy: () => {
      throw notServed(agentId, version);
    },
    actsOnIt: () => false,
    context: () => ({ orderId: null, customerName: null }),
  };
}
