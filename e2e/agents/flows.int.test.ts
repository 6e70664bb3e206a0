import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { listAgents } from "@/lib/runtime/agents/registry";
import { agentFor, answer, runBody, runOnce } from "../api/client";
import { prepareDatabase } from "../api/setup";
import { authedFetch } from "../support/auth";
import { seeded } from "../support/decide";
import { startTestServer, type TestServer } from "../support/server";
import { agentsUnderCheck, exampleTickets } from "./coverage";
import { expectedToolReview, toolReviewAnswers } from "./oracle";

/*
 * The flows of every agent package, generated, on both databases (the embedded PGlite default and Postgres): a ticket
 * from the agent's first example is run with an unmodified HttpAgent to its question; a refresh (the thread read
 * again) names the same question; a second click (two answers at once) is taken once; an answer whose run is cut by
 * SIGKILL is finished by the restarted server, once. The answer is the question's acting answer as the agent's own
 * declaration lets an uninvolved admin give it (./oracle.ts).
 */

const agents = agentsUnderCheck(listAgents());
type Backend = "pglite" | "postgres";

interface View {
  status: string;
  activeRunId: string | null;
  pendingInterrupts: { interruptId: string; action: string; payload: unknown }[];
  decisions: { interruptId: string; status: string }[];
  messages: {
    role: string;
    content?: unknown;
    toolCallId?: string;
    toolCalls?: { id: string; function: { name: string } }[];
  }[];
}

describe.runIf(agents.length > 0).each<Backend>(["pglite", "postgres"])(
  "the flows of every agent package on %s, generated",
  (backend) => {
    let server: TestServer | undefined;
    let databaseUrl = "";
    let env: Record<string, string> = {};
    let cleanup = async () => {};

    beforeAll(async () => {
      if (backend === "pglite") {
        const dir = mkdtempSync(join(tmpdir(), "hitl-agentflows-"));
        databaseUrl = `pglite:${dir}`;
        env = { DATABASE_URL: "", PGLITE_DATA_DIR: join(dir, "db") };
        cleanup = async () => rmSync(dir, { recursive: true, force: true });
      } else {
        const prepared = await prepareDatabase("agentflows");
        databaseUrl = prepared.url;
        cleanup = async () => {
          await prepared.sql.end();
          await prepared.drop();
        };
      }
      // The offline models think 30 ms per word: a run lasts long enough for a kill to land inside it.
      env = { ...env, OFFLINE_TOKEN_DELAY_MS: "30" };
      server = await startTestServer({ databaseUrl, env });
    });
    afterAll(async () => {
      await server?.stop();
      await cleanup();
    });

    const view = async (threadId: string): Promise<View> =>
      (await authedFetch(`${server!.url}/api/threads/${threadId}`, {}, "admin")).json();
    async function settled(threadId: string): Promise<View> {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const v = await view(threadId);
        if (!v.activeRunId && v.status !== "running") return v;
        if (Date.now() > deadline) throw new Error(`${threadId} still running after 60 s`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }

    /** File the agent's first example ticket and run it to its question over AG-UI. */
    async function toQuestion(agentId: string) {
      const agent = agents.find((a) => a.id === agentId)!;
      const ticket = exampleTickets(agent)[0]!;
      const res = await authedFetch(
        `${server!.url}/api/threads`,
        {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ ...ticket, agent: agent.id }),
        },
        "intake",
      );
      expect(res.status).toBe(201);
      const { threadId } = (await res.json()) as { threadId: string };
      const first = await runOnce(agentFor(server!.url, threadId), { message: String(ticket.message) });
      expect(first.events[0]?.type).toBe("RUN_STARTED");
      expect(first.finished, `${agent.id}: the first run finished`).toBeDefined();
      expect(first.interrupts.length, `${agent.id}: the example ticket asks a question`).toBeGreaterThan(0);
      const question = first.interrupts[0]!;
      // The question as the console reads it (the stream carries the agent's own request as raised).
      const pending = (await view(threadId)).pendingInterrupts.find((p) => p.interruptId === question.id);
      const payload = (pending?.payload ?? {}) as Record<string, unknown>;
      // The acting answer an uninvolved admin may give, by the agent's declaration.
      const acting = toolReviewAnswers(agent, payload, seeded(5)).find(
        (a) =>
          a.kind === "approve" &&
          expectedToolReview(agent, payload, { involved: new Set(["filer", "starter"]) }, "admin", a).ok,
      );
      if (!acting) throw new Error(`${agent.id}: no acting answer an admin may give to ${question.reason}`);
      return { agent, threadId, question, payload, answer: acting.wire };
    }

    for (const agentDef of agents) {
      it(`${agentDef.id}: asks, survives a refresh, takes a second click once`, async () => {
        const { threadId, question, answer: wire } = await toQuestion(agentDef.id);
        // A refresh: the thread read again (twice) names the question the stream ended on.
        for (let i = 0; i < 2; i++) {
          const v = await view(threadId);
          expect(v.pendingInterrupts.map((p) => p.interruptId)).toEqual([question.id]);
        }
        // A second click: two answers at once, one taken.
        const post = () =>
          authedFetch(
            `${server!.url}/api/threads/${threadId}/decisions/${question.id}`,
            {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ answer: wire }),
            },
            "admin",
          );
        const statuses = (await Promise.all([post(), post()])).map((r) => r.status).sort();
        expect(
          statuses.filter((s) => s < 300),
          `statuses ${statuses}`,
        ).toHaveLength(1);
        expect(
          statuses.filter((s) => s === 409),
          `statuses ${statuses}`,
        ).toHaveLength(1);
        const after = await settled(threadId);
        expect(after.decisions.filter((d) => d.interruptId === question.id)).toMatchObject([
          { status: "resolved" },
        ]);
        expect(["failed", "needs_attention"]).not.toContain(after.status);
        expect(after.pendingInterrupts.map((p) => p.interruptId)).not.toContain(question.id);
      });

      it(`${agentDef.id}: an answer whose run is cut by SIGKILL is finished once by the restarted server`, async () => {
        const { threadId, question, payload, answer: wire } = await toQuestion(agentDef.id);
        // Resume over AG-UI and kill the server as soon as the run has started (its first event), before it ends.
        const res = await authedFetch(
          `${server!.url}/api/threads/${threadId}/runs`,
          {
            method: "POST",
            headers: { "content-type": "application/json", accept: "text/event-stream" },
            body: JSON.stringify(runBody(threadId, [answer(question, wire)])),
          },
          "admin",
        );
        expect(res.status).toBe(200);
        const reader = res.body!.getReader();
        let seen = "";
        while (!seen.includes("RUN_STARTED")) {
          const chunk = await reader.read();
          if (chunk.done) break;
          seen += new TextDecoder().decode(chunk.value);
        }
        await server!.kill();
        await reader.cancel().catch(() => {});
        expect(seen, "the run had not finished when the server was killed").not.toContain("RUN_FINISHED");
        server = await startTestServer({ databaseUrl, env });
        const after = await settled(threadId);
        expect(after.decisions.filter((d) => d.interruptId === question.id)).toMatchObject([
          { status: "resolved" },
        ]);
        expect(["failed", "needs_attention"]).not.toContain(after.status);
        // Each approved call ran exactly once: one tool result per reviewed call, none repeated by the recovery.
        const names = new Set((payload.requests as { name: string }[]).map((r) => r.name));
        const callIds = after.messages.flatMap((m) =>
          (m.toolCalls ?? []).filter((c) => names.has(c.function.name)).map((c) => c.id),
        );
        expect(callIds.length, `${agentDef.id}: reviewed calls`).toBeGreaterThan(0);
        for (const id of callIds) {
          const results = after.messages.filter((m) => m.role === "tool" && m.toolCallId === id);
          expect(results.length, `${agentDef.id}: results of ${id} after the restart`).toBe(1);
        }
        console.info(
          `[generated flows] ${agentDef.id} on ${backend}: killed mid-run, finished after restart (${after.status})`,
        );
      });
    }
  },
);
