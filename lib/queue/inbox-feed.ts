import "server-only";
import pg from "pg";
import type { AppDb } from "@/lib/db/client";
import {
  INBOX_CHANNEL,
  type InboxChangeView,
  latestInboxChangeId,
  listInboxChanges,
} from "@/lib/db/queries/inbox-changes";
import { env, listenUrl } from "@/lib/platform/env";
import { errorFields, logger } from "@/lib/platform/observability/logger";
import { singleton } from "@/lib/platform/singleton";

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
  /** The database handle its subscribers hand it (the process's one database; null before the first subscriber). */
  db: AppDb | null;
  listeners: Set<Listener>;
  lastId: number;
  /** Ids in the look-back window already handed on (or already there when the pump started). */
  seen: Set<number>;
  client: pg.Client | null;
  timer?: NodeJS.Timeout;
  reading: Promise<void> | null;
  again: boolean;
  stopped: boolean;
  /** The pump's starting point being read (the head, and the window below it as seen); null until subscribed. */
  start: Promise<void> | null;
  /** Bumped when the pump stops: a read begun before the stop hands nothing on and moves nothing. */
  generation: number;
  /** Its reads fail (the database is away): said once, not at every poll, until one succeeds. */
  failing?: boolean;
}

/** The process's one pump (a process-wide singleton: every route bundle's streams share it). */
function pump(): Pump {
  return singleton<Pump>("inbox-feed", () => ({
    db: null,
    listeners: new Set(),
    lastId: -1,
    seen: new Set(),
    client: null,
    reading: null,
    again: false,
    stopped: false,
    start: null,
    generation: 0,
  }));
}

/**
 * Where the pump starts following: the newest change id, and what is already in the look-back window below it counts
 * as handed on. Streams wait for this before reading their own head, so every change after their head reaches them.
 */
function begin(p: Pump): Promise<void> {
  if (!p.start) {
    const generation = p.generation;
    const start = (async () => {
      const db = handleOf(p);
      const head = await latestInboxChangeId({ db });
      const window = await listInboxChanges({ db, afterId: head - LOOKBACK, limit: READ_LIMIT });
      if (generation !== p.generation) return;
      p.seen = new Set(window.map((c) => c.id));
      p.lastId = Math.max(head, ...window.map((c) => c.id));
    })();
    p.start = start;
    // A failed start is tried again by the next subscriber or wake-up.
    start.catch(() => {
      if (p.start === start) p.start = null;
    });
  }
  return p.start;
}

/** Read what is new and hand it to every listener (coalesced: one read at a time, one more if woken meanwhile). */
function wake(): void {
  const p = pump();
  if (p.stopped) return;
  if (p.reading) {
    p.again = true;
    return;
  }
  const generation = p.generation;
  p.reading = (async () => {
    do {
      p.again = false;
      let fresh: InboxChangeView[] = [];
      try {
        await begin(p);
        const read = await listInboxChanges({
          db: handleOf(p),
          afterId: p.lastId - LOOKBACK,
          limit: READ_LIMIT,
        });
        if (generation !== p.generation) return;
        fresh = read.filter((c) => !p.seen.has(c.id));
        for (const c of fresh) {
          p.seen.add(c.id);
          if (c.id > p.lastId) p.lastId = c.id;
        }
        for (const id of p.seen) if (id <= p.lastId - LOOKBACK) p.seen.delete(id);
        // A full page: there may be more behind it.
        if (read.length === READ_LIMIT) p.again = true;
        if (p.failing) logger().info("inbox feed: reading again");
        p.failing = false;
      } catch (error) {
        if (!p.failing)
          logger().error(errorFields(error), "inbox feed: read failed; trying again at each poll");
        p.failing = true;
      }
      if (fresh.length > 0) for (const listener of p.listeners) listener(fresh);
    } while (p.again);
  })().finally(() => {
    if (generation === p.generation) p.reading = null;
  });
}

/** The handle the pump reads with: its subscribers' (it only reads while someone is subscribed). */
function handleOf(p: Pump): AppDb {
  if (!p.db) throw new Error("inbox feed: read before any subscriber handed it a database");
  return p.db;
}

async function listen(p: Pump): Promise<void> {
  const url = listenUrl();
  if (!url || p.client || p.stopped) return;
  const client = new pg.Client({ connectionString: url });
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
 * Follow the inbox change feed: `listener` hears every batch of new changes (never an empty one), each change once.
 * Starts the pump on the first subscriber and stops it after the last one leaves. `started` resolves once the pump
 * knows where it starts: every change committed after that reaches the listener.
 */
export function subscribeInbox({ db, listener }: { db: AppDb; listener: Listener }): {
  started: Promise<void>;
  unsubscribe: () => void;
} {
  const p = pump();
  p.db = db;
  p.stopped = false;
  p.listeners.add(listener);
  const started = begin(p);
  if (!p.timer) {
    p.timer = setInterval(wake, listenUrl() ? env.INBOX_FEED_POLL_MS : Math.min(env.INBOX_FEED_POLL_MS, 250));
    p.timer.unref();
    void listen(p);
  }
  return {
    started,
    unsubscribe: () => {
      p.listeners.delete(listener);
      if (p.listeners.size === 0) stopPump(p);
    },
  };
}

function stopPump(p: Pump): void {
  clearInterval(p.timer);
  p.timer = undefined;
  p.stopped = true;
  // The next subscriber starts a new pump at the head; a read still under way is dropped.
  p.generation += 1;
  p.start = null;
  p.reading = null;
  p.again = false;
  p.lastId = -1;
  p.seen = new Set();
  const client = p.client;
  p.client = null;
  if (client) {
    client.removeAllListeners();
    client.on("error", () => {});
    client.end().catch(() => {});
  }
}
