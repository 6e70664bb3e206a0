import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authHeaders } from "../support/auth";
import { useTestServer } from "./setup";

/**
 * The live inbox stream against a production server on real Postgres: what a browser receives. Changes are written
 * straight through the feed's SQL function (as the triggers do), so the test controls commit order.
 */
// Push and polling each alone (issue 31): with the feed's polling off, every change must arrive by its NOTIFY; with
// LISTEN off (a server behind a transaction pooler without DATABASE_LISTEN_URL), by polling.
describe.each([
  ["push only (polling off)", { INBOX_FEED_POLL_MS: "600000" }],
  ["polling only (no LISTEN)", { INBOX_FEED_POLL_MS: "100", DATABASE_POOLER: "transaction" }],
] as const)("live inbox stream, %s", (_mode, env) => {
  const ctx = useTestServer("inboxstream", undefined, { ...env });
  let pool: pg.Pool;
  beforeAll(() => {
    pool = new pg.Pool({ connectionString: ctx.prepared.url, max: 4 });
  });
  afterAll(() => pool.end());

  /** Open the stream; collect every `changes` frame's entries until `stop` is called. */
  async function follow() {
    const abort = new AbortController();
    const res = await fetch(ctx.url("/api/inbox/stream"), {
      headers: await authHeaders(ctx.server!.url, "viewer"),
      signal: abort.signal,
    });
    expect(res.status).toBe(200);
    const frames: { event: string; changes: { interruptId: string }[] }[] = [];
    let ready!: () => void;
    const isReady = new Promise<void>((r) => {
      ready = r;
    });
    const reading = (async () => {
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          buffer += decoder.decode(value, { stream: true });
          for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const event = /^event: (.*)$/m.exec(block)?.[1];
            const data = /^data: (.*)$/m.exec(block)?.[1];
            if (event === "ready") ready();
            if (event === "changes" && data) frames.push({ event, changes: JSON.parse(data).changes });
          }
        }
      } catch {
        // aborted
      }
    })();
    await isReady;
    return {
      frames,
      received: () => frames.flatMap((f) => f.changes.map((c) => c.interruptId)),
      stop: async () => {
        abort.abort();
        await reading;
      },
    };
  }

  const until = async (check: () => boolean, ms = 10_000) => {
    const end = Date.now() + ms;
    while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 25));
  };

  it("sends nothing while nothing changes (no empty frames that make every inbox refetch)", async () => {
    const stream = await follow();
    // Twenty of the feed's safety reads (every 100 ms here) with no change in between.
    await new Promise((r) => setTimeout(r, 2_000));
    await stream.stop();
    expect(stream.frames).toEqual([]);
  });

  it("delivers a change that commits after a newer one, exactly once", async () => {
    const stream = await follow();
    const late = await pool.connect();
    try {
      await late.query("BEGIN");
      // Takes the lower id, then holds its commit.
      await late.query("SELECT inbox_change('late-1', 'thread-late', 'claimed')");
      await pool.query("SELECT inbox_change('early-2', 'thread-early', 'claimed')");
      await until(() => stream.received().includes("early-2"));
      expect(stream.received()).toEqual(["early-2"]);
      await late.query("COMMIT");
    } finally {
      late.release();
    }
    await until(() => stream.received().includes("late-1"));
    // A few more feed reads: the late change must not come twice.
    await new Promise((r) => setTimeout(r, 500));
    await stream.stop();
    expect(stream.received()).toEqual(["early-2", "late-1"]);
  });

  it("a change committed the moment a fresh stream says it is ready reaches it", async () => {
    // Each round is the only stream, so the server's feed starts afresh every time.
    for (let round = 0; round < 8; round++) {
      const stream = await follow();
      await pool.query("SELECT inbox_change($1, 'thread-ready', 'claimed')", [`ready-${round}`]);
      await until(() => stream.received().includes(`ready-${round}`), 3_000);
      await stream.stop();
      expect(stream.received(), `round ${round}`).toEqual([`ready-${round}`]);
      // Let the server notice the stream is gone (its feed stops with its last subscriber).
      await new Promise((r) => setTimeout(r, 200));
    }
  });

  it("every one of many interleaved changes reaches every stream once", async () => {
    const streams = await Promise.all([follow(), follow(), follow()]);
    const ids = Array.from({ length: 60 }, (_, i) => `many-${i}`);
    // Twelve concurrent writers, each committing its five changes in its own order.
    await Promise.all(
      Array.from({ length: 12 }, async (_, w) => {
        for (let k = 0; k < 5; k++) {
          await pool.query("SELECT inbox_change($1, 'thread-many', 'claimed')", [ids[w * 5 + k]]);
        }
      }),
    );
    for (const s of streams) await until(() => ids.every((id) => s.received().includes(id)));
    await new Promise((r) => setTimeout(r, 300));
    for (const s of streams) {
      await s.stop();
      const got = s.received().filter((id) => id.startsWith("many-"));
      expect(got.sort()).toEqual([...ids].sort());
    }
  });
});
