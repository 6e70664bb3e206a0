import "server-only";
import pg from "pg";
import { AUTH_CHANNEL, invalidateSessions, setSessionCacheLive } from "@/lib/auth/session-cache";
import { getDatabase } from "@/lib/db/client";
import type { Database } from "@/lib/db/open";
import { EVENTS_CHANNEL } from "@/lib/db/queries/events";
import { getRun, RUNS_CHANNEL } from "@/lib/db/queries/runs";
import { forgetSealingAnswers, INSTANCES_CHANNEL } from "@/lib/db/vault";
import { listenUrl } from "@/lib/platform/env";
import { peekSingleton, setSingleton } from "@/lib/platform/singleton";
import { instanceId } from "../../platform/instance";
import { backoff, reportReachable, reportUnreachable } from "../../platform/status";
import { wakeThread } from "../runs/event-bus";
import { abortCancelledRun, activeRuns } from "../runs/executor";
import { sweepSoon } from "../runs/recovery";

interface Listener {
  client: pg.Client | null;
  stopped: boolean;
  timer?: NodeJS.Timeout;
}
/** This process's listener once started (process-wide: one connection however often the module is bundled). */
const LISTENER = "event-listener";

/**
 * Hear appends made by other server instances (Postgres LISTEN/NOTIFY on a dedicated connection) and wake this
 * process's streams of those threads, so a run executing on instance A streams live to a client connected to B —
 * with Postgres only. Also hears runs released by a draining instance, and sweeps for them at once. Reconnects by
 * itself with back-off; while disconnected, streams still see new events by polling the log. Also hears changes to
 * sessions and users (`hitl_auth`), which empty the session cache; the cache serves only while this listens.
 */
export async function startEventListener(): Promise<void> {
  const url = listenUrl();
  if (peekSingleton<Listener>(LISTENER) || !url) return;
  const state = setSingleton<Listener>(LISTENER, { client: null, stopped: false });
  const me = instanceId();
  const delays = backoff({ initialMs: 250, maxMs: 5_000 });
  const connect = async (): Promise<void> => {
    if (state.stopped) return;
    const client = new pg.Client({ connectionString: url });
    let retried = false;
    const retry = (error: unknown) => {
      if (retried) return;
      retried = true;
      client.removeAllListeners();
      client.on("error", () => {});
      client.end().catch(() => {});
      if (state.client === client) state.client = null;
      // Revocations announced while nobody listens would be missed: no cached sessions until listening again.
      setSessionCacheLive(false);
      if (state.stopped) return;
      reportUnreachable("listener", error);
      state.timer = setTimeout(() => void connect(), delays.next());
      state.timer.unref();
    };
    client.on("error", retry);
    client.on("end", () => retry(new Error("connection ended")));
    client.on("notification", (message) => {
      // An instance came live, perhaps of a release that cannot read what this one seals: ask again before sealing.
      if (message.channel === INSTANCES_CHANNEL) {
        forgetSealingAnswers();
        return;
      }
      if (message.channel === AUTH_CHANNEL) {
        invalidateSessions();
        return;
      }
      if (message.channel === RUNS_CHANNEL) {
        const payload = message.payload ?? "";
        // An operator asked to stop a run: the instance executing it aborts it at once (the heartbeat would, later).
        if (payload.startsWith("cancel|")) void stopIfHere(payload.slice("cancel|".length));
        else if (payload !== me) sweepSoon();
        return;
      }
      const [owner, threadId] = (message.payload ?? "").split("|");
      if (threadId && owner !== me) wakeThread(threadId);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${EVENTS_CHANNEL}`);
      await client.query(`LISTEN ${RUNS_CHANNEL}`);
      await client.query(`LISTEN ${AUTH_CHANNEL}`);
      await client.query(`LISTEN ${INSTANCES_CHANNEL}`);
      if (state.stopped) {
        retry(new Error("stopped"));
        return;
      }
      state.client = client;
      setSessionCacheLive(true);
      delays.reset();
      reportReachable("listener");
    } catch (error) {
      retry(error);
    }
  };
  await connect();
}

/** A run asked to stop: if it executes here, abort it as stopped by whoever asked (read from its row). */
async function stopIfHere(runId: string): Promise<void> {
  if (!activeRuns().has(runId)) return;
  try {
    const { db } = await getDatabase();
    const run = await getRun({ db, runId });
    if (run?.cancelRequestedBy) abortCancelledRun(runId, run.cancelRequestedBy);
  } catch {
    // The heartbeat sees the request too.
  }
}

/** Stop listening (the process is exiting). */
export async function stopEventListener(): Promise<void> {
  const state = peekSingleton<Listener>(LISTENER);
  if (!state) return;
  state.stopped = true;
  clearTimeout(state.timer);
  const client = state.client;
  state.client = null;
  setSessionCacheLive(false);
  if (client) {
    client.removeAllListeners();
    client.on("error", () => {});
    await client.end().catch(() => {});
  }
}

/** Set once the embedded database's auth notifications are heard (process-wide, like the listener). */
const EMBEDDED = "embedded-listener";

/**
 * Embedded PGlite: this process is the database's only client (its data directory is locked), so every change to
 * sessions, users and keys runs here, and the auth tables' triggers' NOTIFY is heard in-process (PGlite delivers a
 * transaction's notifications with its COMMIT). The session cache can serve on PGlite too, with the same revocation.
 */
export async function listenEmbedded(database: Database): Promise<void> {
  if (peekSingleton<boolean>(EMBEDDED) || !database.listen) return;
  await database.listen(AUTH_CHANNEL, invalidateSessions);
  setSingleton(EMBEDDED, true);
  setSessionCacheLive(true);
}
