/**
 * The refund graph as LangGraph's own API server (`langgraphjs dev`) loads it for `npm run bench:peer`: the app's
 * `buildRefundGraph`, unchanged — same nodes, interrupts and effects (order lookup, refund and outbox rows written to
 * the bench's Postgres database) — with the offline model at no token delay, as `next start` runs it in the bench.
 * The checkpointer given here is a placeholder: the dev server attaches its own in-memory one.
 * Loaded by the peer server only (through its tsx loader with `--conditions=react-server`), never by the app.
 */
import { MemorySaver } from "@langchain/langgraph";
import { buildRefundGraph } from "@/lib/agents/refund/graph";
import { OfflineChatModel } from "@/lib/agents/refund/offline-model";
import { openPostgres } from "@/lib/db/open";

const url = process.env.PEER_DATABASE_URL;
if (!url) throw new Error("PEER_DATABASE_URL is not set");

export const refund = buildRefundGraph({
  checkpointer: new MemorySaver(),
  db: openPostgres(url, { max: 20 }).db,
  model: new OfflineChatModel({ tokenDelayMs: 0 }),
});
