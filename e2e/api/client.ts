import { type AgentSubscriber, HttpAgent } from "@ag-ui/client";
import type { BaseEvent, Interrupt, ResumeEntry } from "@ag-ui/core";
import pg from "pg";
import { authedFetch, authHeaders, type Who } from "../support/auth";

/** Create a ticket thread over HTTP, as the intake system would (its API key); returns its id. */
export async function createTicket(
  baseUrl: string,
  message: string,
  orderRef?: string,
  agent?: string,
): Promise<string> {
  const res = await authedFetch(
    `${baseUrl}/api/threads`,
    {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message, ...(orderRef ? { orderRef } : {}), ...(agent ? { agent } : {}) }),
    },
    "intake",
  );
  if (res.status !== 201) throw new Error(`create ticket: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { threadId: string }).threadId;
}

/** An unmodified HttpAgent for a thread (a browser tab, as far as the server can tell). */
export function agentFor(baseUrl: string, threadId: string): HttpAgent {
  return new HttpAgent({ url: `${baseUrl}/api/threads/${threadId}/runs`, threadId });
}

export interface RunOutcome {
  events: BaseEvent[];
  finished: BaseEvent | undefined;
  interrupts: Interrupt[];
}

/** Threads whose first run this test process started (as the intake key): later runs are an operator's. */
const started = new Set<string>();

/**
 * Run the agent once (new input or resume) and collect every event it accepted. Who sends it: `as`, or the intake
 * key for a thread's first run and a supervisor after that (so the four-eyes rules let the supervisor approve).
 */
export async function runOnce(
  agent: HttpAgent,
  params: { message?: string; resume?: ResumeEntry[]; actor?: string; as?: Who } = {},
): Promise<RunOutcome> {
  const who = params.as ?? (params.resume || started.has(agent.threadId) ? "supervisor" : "intake");
  started.add(agent.threadId);
  agent.headers = await authHeaders(agent.url, who);
  if (params.message) agent.addMessage({ id: crypto.randomUUID(), role: "user", content: params.message });
  const events: BaseEvent[] = [];
  const subscriber: AgentSubscriber = {
    onEvent: ({ event }) => {
      events.push(event);
    },
  };
  await agent.runAgent(
    {
      ...(params.resume ? { resume: params.resume } : {}),
      forwardedProps: { actor: params.actor ?? "test-operator" },
    },
    subscriber,
  );
  const finished = events.find((e) => e.type === "RUN_FINISHED");
  const outcome = (finished as { outcome?: { type: string; interrupts?: Interrupt[] } } | undefined)?.outcome;
  return { events, finished, interrupts: outcome?.type === "interrupt" ? (outcome.interrupts ?? []) : [] };
}

/** The interrupt payload the server attached (AG-UI `Interrupt.metadata.payload`). */
export function payloadOf(interrupt: Interrupt): Record<string, unknown> {
  return (interrupt.metadata?.payload ?? {}) as Record<string, unknown>;
}

/** Resume entry answering one interrupt. */
export function answer(interrupt: Interrupt, payload: unknown): ResumeEntry {
  return { interruptId: interrupt.id, status: "resolved", payload };
}

/** A small direct SQL helper for assertions (counts, rows). */
export function sqlFor(url: string) {
  const pool = new pg.Pool({ connectionString: url, max: 3 });
  // An idle connection cut by the database (a failover suite kills it) is dropped by the pool, not thrown.
  pool.on("error", () => {});
  return {
    async rows<T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> {
      return (await pool.query(text, params)).rows as T[];
    },
    async count(table: string, where = "true", params: unknown[] = []): Promise<number> {
      const r = await pool.query(`SELECT count(*)::int AS n FROM ${table} WHERE ${where}`, params);
      return r.rows[0].n as number;
    },
    /** The same pool as a plain client (the vault's key lookups take one). */
    async query<T = Record<string, unknown>>(text: string, params: readonly unknown[] = []): Promise<T[]> {
      return (await pool.query(text, [...params])).rows as T[];
    },
    end: () => pool.end(),
  };
}

/** Raw POST of a run body; returns status and parsed JSON (for refusals) or the SSE text. */
export async function postRun(
  baseUrl: string,
  threadId: string,
  body: unknown,
  who: Who = "supervisor",
): Promise<{ status: number; json?: Record<string, unknown>; text: string }> {
  const res = await authedFetch(
    `${baseUrl}/api/threads/${threadId}/runs`,
    {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: typeof body === "string" ? body : JSON.stringify(body),
    },
    who,
  );
  const text = await res.text();
  let json: Record<string, unknown> | undefined;
  if (res.headers.get("content-type")?.includes("application/json")) json = JSON.parse(text);
  return { status: res.status, json, text };
}

/** A RunAgentInput for `threadId`: a resume when `resume` is given, new input when `message` is. */
export function runBody(threadId: string, resume?: unknown[], message?: string) {
  return {
    threadId,
    runId: crypto.randomUUID(),
    messages: message ? [{ id: crypto.randomUUID(), role: "user", content: message }] : [],
    tools: [],
    context: [],
    ...(resume ? { resume } : {}),
  };
}

/** A ticket about `order` filed with the intake key and run until it asks its first question: thread and interrupt. */
export async function pausedTicket(
  baseUrl: string,
  order: string,
): Promise<{ threadId: string; interruptId: string }> {
  const message = `Refund ${order} please, it broke.`;
  const threadId = await createTicket(baseUrl, message);
  const run = await runOnce(agentFor(baseUrl, threadId), { message });
  return { threadId, interruptId: run.interrupts[0]!.id };
}

/** A refund ticket about `order` whose first run `startedBy` started, paused at its refund approval: the thread id. */
export async function pausedAtApproval(
  baseUrl: string,
  order: string,
  startedBy: Who,
  message = `Refund ${order} please, it broke.`,
): Promise<string> {
  const threadId = await createTicket(baseUrl, message);
  const run = await runOnce(agentFor(baseUrl, threadId), { message, as: startedBy });
  const reason = run.interrupts[0]?.reason;
  if (reason !== "refund_approval")
    throw new Error(`${order}: paused at ${reason ?? "nothing"}, not refund_approval`);
  return threadId;
}
