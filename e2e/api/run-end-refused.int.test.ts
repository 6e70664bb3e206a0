import type { BaseEvent } from "@ag-ui/core";
import { authHeaders } from "../support/auth";
import { agentFor, createTicket } from "./client";
import { useTestServer } from "./setup";

/*
 * The write that ends a run can fail — a database fault, a constraint, a ledger that refuses to close while a decision
 * is still pending (`conflict:decision_pending`). Before, the run's RUN_FINISHED had been numbered, the write failed,
 * and ending the run with RUN_ERROR threw ("fail() called after the run ended"): the run stayed `running` and every
 * open stream of it hung. Now the end that was never written gives its place to a RUN_ERROR: the stream (the real
 * @ag-ui/client) ends with it, at the next sequence number (no hole in the log), and the run and thread say failed.
 * The failing write is a real one: a trigger in the test database refuses any run's successful end for marked threads.
 */

describe("a run whose end cannot be written", () => {
  const ctx = useTestServer("run-end-refused");

  beforeAll(async () => {
    await ctx.prepared.sql.rows(`
      CREATE TABLE refuse_end (thread_id text PRIMARY KEY);
      CREATE FUNCTION refuse_end() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.status IN ('succeeded', 'interrupted') AND EXISTS (SELECT 1 FROM refuse_end WHERE thread_id = NEW.thread_id) THEN
          RAISE EXCEPTION 'the test refuses this run''s end';
        END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER refuse_end BEFORE UPDATE ON runs FOR EACH ROW EXECUTE FUNCTION refuse_end();`);
  });

  it("ends its open stream with RUN_ERROR, never a hang; the run and thread say failed", async () => {
    const message = "Refund ORD-1001 please, it broke.";
    const threadId = await createTicket(ctx.url(""), message);
    await ctx.prepared.sql.rows("INSERT INTO refuse_end VALUES ($1)", [threadId]);
    const agent = agentFor(ctx.url(""), threadId);
    agent.headers = await authHeaders(ctx.url(""), "intake");
    agent.addMessage({ id: crypto.randomUUID(), role: "user", content: message });
    const events: BaseEvent[] = [];
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      agent.runAgent({}, { onEvent: ({ event }) => void events.push(event) }).then(
        () => "ended",
        () => "ended",
      ),
      new Promise<string>((resolve) => {
        timer = setTimeout(() => resolve("hung"), 20_000);
      }),
    ]);
    clearTimeout(timer);
    expect(outcome).toBe("ended");
    const last = events.at(-1) as { type: string; code?: string } | undefined;
    expect(last?.type).toBe("RUN_ERROR");
    expect(last?.code).toBe("internal:run_failed");
    expect(events.some((e) => e.type === "RUN_FINISHED")).toBe(false);
    const [run] = await ctx.prepared.sql.rows<{ status: string; error_code: string }>(
      "SELECT status, error_code FROM runs WHERE thread_id = $1 AND kind = 'input'",
      [threadId],
    );
    expect(run).toEqual({ status: "failed", error_code: "internal:run_failed" });
    const [thread] = await ctx.prepared.sql.rows<{ status: string }>(
      "SELECT status FROM threads WHERE id = $1",
      [threadId],
    );
    expect(thread?.status).toBe("failed");
    // The log has no hole: every sequence number of the thread from 1 to its last, the RUN_ERROR last.
    const seqs = await ctx.prepared.sql.rows<{ seq: number; type: string }>(
      "SELECT seq::int AS seq, type FROM events WHERE thread_id = $1 ORDER BY seq",
      [threadId],
    );
    expect(seqs.map((e) => e.seq)).toEqual(seqs.map((_, i) => (seqs[0]?.seq ?? 1) + i));
    expect(seqs.at(-1)?.type).toBe("RUN_ERROR");
  });
});
