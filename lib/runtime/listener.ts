import "server-only";
import pg from "pg";
import { EVENTS_CHANNEL } from "@/lib/db/queries/events";
import { env } from "@/lib/env";
import { wakeThread } from "./event-bus";
import { instanceId } from "./instance";

const KEY = Symbol.for("hitl-console.event-listener");
type G = typeof globalThis & { [KEY]?: boolean };

/**
 * Hear appends made by other server instances (Postgres LISTEN/NOTIFY on a dedicated connection) and wake this
 * process's streams of those threads, so a run executing on instance A streams live to a client connected to B —
 * with Postgres only. Reconnects by itself; while disconnected, streams still see new events by polling the log.
 */
export async function startEventListener(): Promise<void> {
  const g = globalThis as G;
  if (g[KEY] || !env.DATABASE_URL) return;
  g[KEY] = true;
  const me = instanceId();
  const connect = async (): Promise<void> => {
    const client = new pg.Client({ connectionString: env.DATABASE_URL });
    let retried = false;
    const retry = () => {
      if (retried) return;
      retried = true;
      client.removeAllListeners();
      client.end().catch(() => {});
      setTimeout(() => void connect().catch(() => {}), 1_000).unref();
    };
    client.on("error", (error) => {
      console.error("[listener] connection lost:", error.message);
      retry();
    });
    client.on("notification", (message) => {
      const [owner, threadId] = (message.payload ?? "").split("|");
      if (threadId && owner !== me) wakeThread(threadId);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${EVENTS_CHANNEL}`);
    } catch (error) {
      console.error("[listener] could not listen:", error instanceof Error ? error.message : error);
      retry();
    }
  };
  await connect();
}
