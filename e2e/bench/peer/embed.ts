/**
 * LangGraph's embeddable API server (`createEmbedServer` from `@langchain/langgraph-api`, the same thread and run
 * routes the dev server answers) serving the same refund graph as `graph.ts`, with the checkpointer chosen by
 * PEER_CHECKPOINTER: `memory` (LangGraph's `MemorySaver`) or `postgres` (LangGraph's own `PostgresSaver` on the peer's
 * database, PEER_DATABASE_URL, its tables made by its own `setup()` in a schema of their own there). `npm run bench:peer -- --peer
 * embed-memory|embed-postgres` starts it instead of `langgraphjs dev`, to measure what LangGraph's own durable
 * checkpointing costs a ticket on LangGraph's own server.
 *
 * The server's packages come from the folder the bench installs the peer into (PEER_DIR), not from the app's
 * dependencies; thread records are kept in memory (only checkpoints are durable, as the dev server keeps everything
 * in memory). GET /ok answers when it listens. Run by the bench only: `node --conditions=react-server --import tsx`.
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { MemorySaver } from "@langchain/langgraph";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import pg from "pg";
import { refund } from "./graph";

const dir = process.env.PEER_DIR;
const url = process.env.PEER_DATABASE_URL;
const port = Number(process.env.PORT);
const kind = process.env.PEER_CHECKPOINTER;
if (!dir || !url || !port || (kind !== "memory" && kind !== "postgres")) {
  throw new Error("PEER_DIR, PEER_DATABASE_URL, PORT and PEER_CHECKPOINTER (memory | postgres) must be set");
}

const fromPeer = (path: string) => import(pathToFileURL(join(dir, "node_modules", path)).href);
const { createEmbedServer } = await fromPeer("@langchain/langgraph-api/dist/experimental/embed.mjs");
const { serve } = await fromPeer("@hono/node-server/dist/index.mjs");

let checkpointer: BaseCheckpointSaver;
if (kind === "postgres") {
  // Its own pool of 20, as the app's request pool and as bench:saver gives the official saver; its own schema (the
  // peer's database holds the app's tables, whose old checkpoint table names are views).
  const saver = new PostgresSaver(new pg.Pool({ connectionString: url, max: 20 }), undefined, {
    schema: "langgraph",
  });
  await saver.setup();
  checkpointer = saver;
} else {
  checkpointer = new MemorySaver();
}

type Metadata = Record<string, unknown>;
const threads = new Map<string, { thread_id: string; metadata: Metadata }>();
const app = createEmbedServer({
  graph: { refund },
  checkpointer,
  threads: {
    async get(id: string) {
      const thread = threads.get(id);
      if (!thread) throw new Error(`thread ${id} not found`);
      return thread;
    },
    async set(id: string, options: { kind: "put" | "patch"; metadata?: Metadata }) {
      const before = threads.get(id);
      const thread = {
        thread_id: id,
        metadata:
          options.kind === "patch" ? { ...before?.metadata, ...options.metadata } : (options.metadata ?? {}),
      };
      threads.set(id, thread);
      return thread;
    },
    async delete(id: string) {
      threads.delete(id);
    },
  },
});

serve({
  fetch: (request: Request) =>
    new URL(request.url).pathname === "/ok" ? new Response("ok") : app.fetch(request),
  port,
  hostname: "127.0.0.1",
});
console.log(`embed peer (${kind}) listening on ${port}`);
