import { authedFetch, emailOf } from "../support/auth";
import { agentFor, createTicket, postRun, runBody, runOnce } from "./client";
import { useTestServer } from "./setup";

/*
 * Graph versions on a real server: every thread, run and checkpoint records the version it runs under; a thread whose
 * version is no longer deployed is refused loudly (409 conflict:graph_version), marked needs_attention, and a
 * supervisor forks it onto the current version or closes it; a thread of a version this server does not have yet
 * (a rolling upgrade) is queued for an instance that has it, never run here.
 */
describe("graph versions", () => {
  // A short sweep interval: the queued run below sits through several sweeps.
  const ctx = useTestServer("versions", { prefix: "ORD-6", count: 10 }, { RUN_SWEEP_INTERVAL_MS: "400" });
  const sql = () => ctx.prepared.sql;
  const approve = (interruptId: string) => [
    { interruptId, status: "resolved", payload: { decision: "approve" } },
  ];

  async function paused(order: string) {
    const message = `Refund ${order} please, it broke.`;
    const threadId = await createTicket(ctx.server!.url, message);
    const run = await runOnce(agentFor(ctx.server!.url, threadId), { message, as: "intake" });
    return { threadId, interruptId: run.interrupts[0]!.id };
  }
  const view = async (threadId: string) =>
    (await authedFetch(ctx.url(`/api/threads/${threadId}`), {}, "viewer")).json();

  it("records the version on the thread, its runs and every checkpoint", async () => {
    const { threadId } = await paused("ORD-6000");
    const [thread] = await sql().rows<{ agent_version: string }>(
      "SELECT agent_version FROM threads WHERE id = $1",
      [threadId],
    );
    expect(thread?.agent_version).toBe("1");
    expect(await sql().count("runs", "thread_id = $1 AND agent_key = 'refund@1'", [threadId])).toBe(1);
    const versions = await sql().rows<{ v: string | null }>(
      "SELECT DISTINCT metadata->>'agent_version' AS v FROM checkpoint.checkpoints WHERE thread_id = $1 AND metadata->>'source' = 'loop'",
      [threadId],
    );
    expect(versions.map((r) => r.v)).toEqual(["1"]);
  });

  it("refuses a resume whose version is gone, marks the thread, and a supervisor forks it onto the current version", async () => {
    const { threadId, interruptId } = await paused("ORD-6001");
    await sql().rows("UPDATE threads SET agent_version = '0' WHERE id = $1", [threadId]);
    const before = await sql().rows("SELECT count(*)::int AS runs FROM runs WHERE thread_id = $1", [
      threadId,
    ]);
    const refused = await postRun(
      ctx.server!.url,
      threadId,
      runBody(threadId, approve(interruptId)),
      "operator",
    );
    expect(refused.status).toBe(409);
    expect(refused.json?.code).toBe("conflict:graph_version");
    expect(refused.json?.details).toMatchObject({ threadVersion: "0", currentVersion: "1", newer: false });
    // The inbox filters on the version a thread is pinned to (what is left before a version is retired).
    const inbox = async (query: string) =>
      (await authedFetch(ctx.url(`/api/threads?${query}`), {}, "viewer")).json() as Promise<{
        items: { decision: { interruptId: string } }[];
      }>;
    expect((await inbox("version=refund@0")).items.map((i) => i.decision.interruptId)).toEqual([interruptId]);
    expect(
      (await inbox("version=refund@1&limit=200")).items.map((i) => i.decision.interruptId),
    ).not.toContain(interruptId);
    const badVersion = await authedFetch(ctx.url("/api/threads?version=refund"), {}, "viewer");
    expect(badVersion.status).toBe(400);
    expect(
      await sql().rows("SELECT count(*)::int AS runs FROM runs WHERE thread_id = $1", [threadId]),
    ).toEqual(before);
    expect(await sql().count("decisions", "interrupt_id = $1 AND status = 'pending'", [interruptId])).toBe(1);
    const marked = await view(threadId);
    expect(marked.status).toBe("needs_attention");
    expect(marked.attention).toMatchObject({ currentVersion: "1", canMigrate: false });
    expect(marked.attention.reason).toContain("version 0");

    const approval = marked.decisions.find((d: { action: string }) => d.action === "refund_approval");
    const fork = await authedFetch(ctx.url(`/api/threads/${threadId}/fork`), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ checkpointId: approval.checkpointId, onto: "current" }),
    });
    expect(fork.status).toBe(202);
    for (let i = 0; i < 100 && (await view(threadId)).status === "running"; i++)
      await new Promise((r) => setTimeout(r, 100));
    const moved = await view(threadId);
    expect(moved.agentVersion).toBe("1");
    const [again] = moved.pendingInterrupts;
    expect(again.action).toBe("refund_approval");
    const ok = await postRun(
      ctx.server!.url,
      threadId,
      runBody(threadId, approve(again.interruptId)),
      "operator",
    );
    expect(ok.status).toBe(200);
    expect(await sql().count("refunds", "order_id = 'ORD-6001'")).toBe(1);
    const audit = await (
      await authedFetch(ctx.url(`/api/audit?action=fork&threadId=${threadId}`), {}, "viewer")
    ).json();
    expect(audit.items[0].detail.version).toEqual({ from: "0", to: "1" });
  });

  it("lets a supervisor close a thread no version can run, with a note; its decisions lapse", async () => {
    const { threadId, interruptId } = await paused("ORD-6002");
    await sql().rows("UPDATE threads SET agent_version = '0' WHERE id = $1", [threadId]);
    const close = (who: "operator" | "supervisor", note: string) =>
      authedFetch(
        ctx.url(`/api/threads/${threadId}/close`),
        { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ note }) },
        who,
      );
    expect((await close("operator", "no")).status).toBe(403);
    expect((await close("supervisor", "Customer refunded by phone")).status).toBe(200);
    expect((await view(threadId)).status).toBe("closed");
    expect(await sql().count("decisions", "interrupt_id = $1 AND status = 'superseded'", [interruptId])).toBe(
      1,
    );
    const [entry] = await sql().rows<{ actor: string }>(
      "SELECT actor FROM audit_log WHERE action = 'thread_closed' AND thread_id = $1",
      [threadId],
    );
    expect(entry?.actor).toBe(emailOf("supervisor"));
  });

  it("queues a run of a version this server does not have yet, and never runs it here", async () => {
    const message = "Refund ORD-6003 please, it broke.";
    const threadId = await createTicket(ctx.server!.url, message);
    await sql().rows("UPDATE threads SET agent_version = '9' WHERE id = $1", [threadId]);
    const abort = new AbortController();
    const started = authedFetch(
      ctx.url(`/api/threads/${threadId}/runs`),
      {
        method: "POST",
        headers: { "content-type": "application/json", accept: "text/event-stream" },
        body: JSON.stringify(runBody(threadId, undefined, message)),
        signal: abort.signal,
      },
      "intake",
    );
    const res = await started;
    expect(res.status).toBe(200);
    // Six sweeps later it is still waiting for an instance that has refund@9.
    await new Promise((r) => setTimeout(r, 2_500));
    abort.abort();
    const [run] = await sql().rows<{ status: string; owner: string | null; agent_key: string }>(
      "SELECT status, owner, agent_key FROM runs WHERE thread_id = $1",
      [threadId],
    );
    expect(run).toEqual({ status: "queued", owner: null, agent_key: "refund@9" });
    expect(await sql().count("checkpoint.checkpoints", "thread_id = $1", [threadId])).toBe(0);
  });
});
