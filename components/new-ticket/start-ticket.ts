import type { RunAgentInput } from "@ag-ui/core";
import { postJson } from "@/components/ui/fetch-json";
import { AppError } from "@/lib/contract/errors";

/** A random UUID, also where `crypto.randomUUID` is missing (pages served over plain http on a LAN address). */
function newId(): string {
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = ((b[6] ?? 0) & 0x0f) | 0x40;
  b[8] = ((b[8] ?? 0) & 0x3f) | 0x80;
  const hex = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Create the ticket's thread, handled by `agent`: `ticket` is its fields (the agent's intake: `message`, its own). */
export async function createTicket(agent: string, ticket: Record<string, unknown>): Promise<string> {
  return (await postJson<{ threadId: string }>("/api/threads", { agent, ...ticket })).threadId;
}

/**
 * Start the thread's first run with the customer's message (an AG-UI RunAgentInput) and return as soon as the
 * server accepted it. The server claims the run before it answers and runs it in the background, so dropping the
 * stream here stops nothing: the thread page re-attaches to the run's events by sequence number.
 */
export async function startFirstRun(threadId: string, message: string): Promise<void> {
  const input: RunAgentInput = {
    threadId,
    runId: newId(),
    messages: [{ id: newId(), role: "user", content: message }],
    tools: [],
    context: [],
    state: {},
    forwardedProps: {},
  };
  let res: Response;
  try {
    res = await fetch(`/api/threads/${encodeURIComponent(threadId)}/runs`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify(input),
    });
  } catch {
    throw new AppError("unavailable:network", "The server cannot be reached. Check your connection.");
  }
  if (!res.ok) throw AppError.fromBody(await res.json().catch(() => null), res.status);
  await res.body?.cancel().catch(() => {});
}
