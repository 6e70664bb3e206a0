import { describe, expect, it } from "vitest";
import { authedFetch } from "../support/auth";
import { pausedTicket } from "./client";
import { useTestServer } from "./setup";

/*
 * Bulk answers go item by item through the same rules as one answer. A refused item leaves the world as it was —
 * including a claim the operator held before asking — and says why in the operator's words, as the thread page does.
 */
describe("bulk decisions", () => {
  // Orders of €500.00, above this server's four-eyes limit: an operator may not approve them (a supervisor must).
  const ctx = useTestServer("bulk", { prefix: "ORD-8", count: 2 }, { FOUR_EYES_MIN_CENTS: "10000" });

  const post = (path: string, body: unknown, who: "operator" | "supervisor") =>
    authedFetch(
      ctx.url(path),
      { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) },
      who,
    );

  it("a refused bulk attempt keeps the operator's own earlier claim, and says why in plain words", async () => {
    const { threadId, interruptId } = await pausedTicket(ctx.server!.url, "ORD-8000");
    expect((await post("/api/inbox/claims", { interruptId }, "operator")).status).toBeLessThan(300);
    const res = await post("/api/inbox/bulk", { interruptIds: [interruptId], verb: "approve" }, "operator");
    expect(res.status).toBe(200);
    const outcome = (await res.json()) as { done: unknown[]; refused: { code: string; message: string }[] };
    expect(outcome.done).toEqual([]);
    expect(outcome.refused).toHaveLength(1);
    expect(outcome.refused[0]?.code).toMatch(/^forbidden:/);
    // No code, no validator arrows: the sentence an operator reads.
    expect(outcome.refused[0]?.message).not.toMatch(/[a-z_]+:[a-z_]+|✖|→|expected/);
    const claims = await (await authedFetch(ctx.url(`/api/inbox/claims?threadId=${threadId}`))).json();
    expect(JSON.stringify(claims)).toContain(interruptId);
    expect(await ctx.prepared.sql.count("decision_claims", "interrupt_id = $1", [interruptId])).toBe(1);
  });

  it("a claim taken only for the attempt is let go when the item is refused", async () => {
    const { interruptId } = await pausedTicket(ctx.server!.url, "ORD-8001");
    const res = await post("/api/inbox/bulk", { interruptIds: [interruptId], verb: "approve" }, "operator");
    expect(((await res.json()) as { refused: unknown[] }).refused).toHaveLength(1);
    expect(await ctx.prepared.sql.count("decision_claims", "interrupt_id = $1", [interruptId])).toBe(0);
  });
});
