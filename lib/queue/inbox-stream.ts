import "server-only";
import { type TeamScope, threadsInScope } from "@/lib/auth/teams";
import type { AppDb } from "@/lib/db/open";
import {
  type InboxChangeView,
  latestInboxChangeId,
  listInboxChanges,
  oldestInboxChangeId,
} from "@/lib/db/queries/inbox-changes";
import { databaseFaultError } from "@/lib/platform/database-faults";
import { errorFields, logger } from "@/lib/platform/observability/logger";
import { singleton } from "@/lib/platform/singleton";
import { subscribeInbox } from "./inbox-feed";

const encoder = new TextEncoder();

/**
 * Open SSE bodies of this process: the same `open-streams` singleton the thread streams use
 * (lib/runtime/runs/stream.ts), so a draining server ends them all.
 */
function openStreams(): Set<() => void> {
  return singleton("open-streams", () => new Set<() => void>());
}

function frame(event: string, data: unknown, id?: number): Uint8Array {
  return encoder.encode(
    `${id !== undefined ? `id: ${id}\n` : ""}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`,
  );
}

const wire = (changes: InboxChangeView[]) =>
  changes.map((c) => ({ interruptId: c.interruptId, threadId: c.threadId, kind: c.kind }));

/**
 * The live inbox as server-sent events. `ready` first, with the cursor (the newest change id); after a reconnect
 * (`after`, from Last-Event-ID) the changes missed meanwhile, or `reset` when they are no longer kept; then
 * `changes` as they happen (each once, never an empty list). Every frame carries the cursor
 * as its SSE id, so the browser's EventSource reconnects from where it was. A keep-alive comment every 15 s.
 */
export function inboxStreamResponse(
  {
    db,
    after,
    once = false,
    scope = { hiddenAgents: [] },
  }: {
    db: AppDb;
    after?: number;
    once?: boolean;
    /** The reader's teams: changes to threads they may not see are left out (one read per batch, only then). */
    scope?: TeamScope;
  },
  signal: AbortSignal,
) {
  const visible = async (changes: InboxChangeView[]): Promise<InboxChangeView[]> => {
    if (scope.hiddenAgents.length === 0) return changes;
    const seen = await threadsInScope(
      db,
      scope,
      changes.map((c) => c.threadId),
    );
    return changes.filter((c) => seen.has(c.threadId));
  };
  // Batches are filtered one after the other, so they go out in the order the feed handed them on.
  let sending: Promise<void> = Promise.resolve();
  let unsubscribe: (() => void) | undefined;
  let keepAlive: NodeJS.Timeout | undefined;
  let end: (() => void) | undefined;
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      let closed = false;
      let cursor = 0;
      const close = () => {
        if (closed) return;
        closed = true;
        unsubscribe?.();
        clearInterval(keepAlive);
        if (end) openStreams().delete(end);
        try {
          controller.close();
        } catch {
          // already gone
        }
      };
      end = close;
      openStreams().add(end);
      signal.addEventListener("abort", close, { once: true });
      const send = (bytes: Uint8Array) => {
        if (closed) return;
        try {
          controller.enqueue(bytes);
        } catch {
          close();
        }
      };
      send(encoder.encode("retry: 1000\n: inbox stream open\n\n"));
      keepAlive = setInterval(() => send(encoder.encode(": keep-alive\n\n")), 15_000);
      // One batch of the feed, in turn after the ones before it (its filtering may wait on a read).
      const push = (changes: InboxChangeView[]) => {
        sending = sending.then(async () => {
          cursor = Math.max(cursor, ...changes.map((c) => c.id));
          const shown = await visible(changes).catch(() => []);
          if (shown.length > 0) send(frame("changes", { changes: wire(shown) }, cursor));
        });
      };
      // Subscribe before reading the head, so nothing committed in between is missed.
      const early: InboxChangeView[][] = [];
      let live = false;
      const subscription = subscribeInbox({
        db,
        listener: (changes) => {
          if (!live) {
            early.push(changes);
            return;
          }
          // Each change comes once from the feed, even one that committed after a higher id was read.
          push(changes);
        },
      });
      unsubscribe = subscription.unsubscribe;
      try {
        // The feed's starting point first: every change committed after it reaches this stream.
        await subscription.started;
        const head = await latestInboxChangeId({ db });
        if (after !== undefined && after < head) {
          const oldest = await oldestInboxChangeId({ db });
          const missed =
            after + 1 >= oldest ? await listInboxChanges({ db, afterId: after, limit: 1000 }) : null;
          cursor = missed?.length ? Math.max(head, missed[missed.length - 1]!.id) : head;
          if (missed && missed.length < 1000) {
            const shown = await visible(missed);
            send(
              shown.length > 0
                ? frame("changes", { changes: wire(shown) }, cursor)
                : frame("ready", { cursor }, cursor),
            );
          } else send(frame("reset", { cursor }, cursor));
        } else {
          cursor = Math.max(head, after ?? 0);
          send(frame("ready", { cursor }, cursor));
        }
        if (once) {
          close();
          return;
        }
        live = true;
        // What the feed handed on while this stream was starting: all of it (a change that committed late may sit
        // below the head just read, and the page the client loads next may have been read before it committed).
        for (const changes of early) push(changes);
      } catch (error) {
        logger().error(errorFields(error), "inbox stream: start failed");
        // The database is away (a failover): a code the page retries on; anything else is the stream's own failure.
        const fault = databaseFaultError(error);
        send(
          frame(
            "error",
            fault
              ? {
                  code: fault.code,
                  message: "The database is not answering; the inbox reconnects by itself.",
                }
              : { code: "internal:stream", message: "The inbox stream failed on the server." },
          ),
        );
        close();
      }
    },
    cancel() {
      unsubscribe?.();
      clearInterval(keepAlive);
      if (end) openStreams().delete(end);
    },
  });
  return new Response(body, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      "x-accel-buffering": "no",
    },
  });
}
