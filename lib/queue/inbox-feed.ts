import "server-only";
import pg from "pg";
import { getDatabase } from "@/lib/db/client";
import {
  INBOX_CHANNEL,
  type InboxChangeView,
  latestInboxChangeId,
  listInboxChanges,
} from "@/lib/db/queries/inbox-changes";
import { env } from "@/lib/env";

/*
 * One change-feed pump per process, shared by every live inbox stream it serves. On Postgres a dedicated connection
 * LISTENs on `inbox_changes` (the triggers NOTIFY after commit, from any instance); the embedded database has no
 * cross-process NOTIFY, so there — and as a safety net everywhere — the pump reads the feed every
 * INBOX_FEED_POLL_MS while someone is subscribed (one indexed query per process, not per browser).
 *
 * Ids come from a sequence, and transactions commit out of id order: a reader can see id 11 before id 10 commits.
 * So each read looks back {@link LOOKBACK} ids below the newest one seen and hands on only the ids not handed on
 * before: a change that commits late still reaches every inbox, once. A read that finds nothing new sends nothing —
 * no inbox refetches its page unless something changed (an expired claim is deleted by the sweeper, which is a change).
 */

/** How far below the newest id seen a read looks for changes that committed late. */
const LOOKBACK = 256;
const READ_LIMIT = 1_000;

type Listener = (changes: InboxChangeView[]) => void;

interface Pump {
  listeners: Set<Listener>;
  lastId: number;
  /** Ids in the look-back window already handed on (or already there when the pump started). */
  seen: Set<number>;
  client: pg.Client | null;
  timer?: NodeJS.Timeout;
  reading: Promise<void> | null;
  again: boolean;
  stopped: boolean;
}

const KEY = Symbol.for("hitl-console.inbox-feed");
type G = typeof globalThis & { [KEY]?: Pump };

function pump(): Pump {
  const g = globalThis as G;
  g[KEY] ??= {
    listeners: new Set(),
    lastId: -1,
    seen: new Set(),
    client: null,
    reading: null,
    again: false,
    stopped: false,
  };
  return g[KEY];
}

/** Read what is new and hand it to every listener (coalesced: one read at a time, one more if woken meanwhile). */
function wake(): void {
  const p = pump();
  if (p.reading) {
    p.again = true;
    return;
  }
  p.reading = (async () => {
    do {
      p.again = false;
      let fresh: InboxChangeView[] = [];
      try {
        const { db } = await getDatabase();
        if (p.lastId < 0) {
          // A new pump starts at the head (each stream replays its own client's cursor itself): what is already in
          // the window counts as seen.
          p.lastId = await latestInboxChangeId({ db });
          const window = await listInboxChanges({ db, afterId: p.lastId - LOOKBACK, limit: LOOKBACK });
          for (const c of window) p.seen.add(c.id);
        }
        const read = await listInboxChanges({ db, afterId: p.lastId - LOOKBACK, limit: READ_LIMIT });
        fresh = read.filter((c) => !p.seen.has(c.id));
        for (const c of fresh) {
          p.seen.add(c.id);
          if (c.id > p.lastId) p.lastId = c.id;
        }
        for (const id of p.seen) if (id <= p.lastId - LOOKBACK) p.seen.delete(id);
        // A full page: there may be more behind it.
        if (read.length === READ_LIMIT) p.again = true;
      } catch (error) {
        console.error("[inbox-feed] read failed:", error instanceof Error ? error.message : error);
      }
      if (fresh.length > 0) for (const listener of p.listeners) listener(fresh);
    } while (p.again);
  })().finally(() => {
    p.reading = null;
  });
}

async function listen(p: Pump): Promise<void> {
  if (!env.DATABASE_URL || p.client || p.stopped) return;
  const client = new pg.Client({ connectionString: env.DATABASE_URL });
  p.client = client;
  const retry = () => {
    client.removeAllListeners();
    client.on("error", () => {});
    client.end().catch(() => {});
    if (p.client === client) p.client = null;
    if (!p.stopped && p.listeners.size > 0) setTimeout(() => void listen(p), 1_000).unref();
  };
  client.on("error", retry);
  client.on("end", retry);
  client.on("notification", () => wake());
  try {
    await client.connect();
    await client.query(`LISTEN ${INBOX_CHANNEL}`);
    // Whatever committed while we were connecting.
    wake();
  } catch {
    retry();
  }
}

/**
 * Follow the inbox change feed: `listener` hears every batch of new changes (never an empty one), each change once. Starts the
 * pump on the first subscriber and stops it after the last one leaves.
 */
export function subscribeInbox(listener: Listener): () => void {
  const p = pump();
  p.stopped = false;
  p.listeners.add(listener);
  if (!p.timer) {
    p.timer = setInterval(
      wake,
      env.DATABASE_URL ? env.INBOX_FEED_POLL_MS : Math.min(env.INBOX_FEED_POLL_MS, 250),
    );
    p.timer.unref();
    void listen(p);
  }
  return () => {
    p.listeners.delete(listener);
    if (p.listeners.size === 0) stopPump(p);
  };
}

function stopPump(p: Pump): void {
  clearInterval(p.timer);
  p.timer = undefined;
  p.stopped = true;
  // The next subscriber starts a new pump at the head.
  p.lastId = -1;
  p.seen.clear();
  const client = p.client;
  p.client = null;
  if (client) {
    client.removeAllListeners();
    client.on("error", () => {});
    client.end().catch(() => {});
  }
}
