import type { PendingInterruptView } from "@/lib/runtime/views/thread-view";
import { authedFetch, type Who } from "../support/auth";

/** What the harness hears from streams, to time its kills (e.g. right after a step starts). */
export type Observer = (event: { type: string; stepName?: string }) => void;

/** Shared view of the server under test: its URL stays the same across restarts (same port). */
export interface Target {
  url: string;
  /** Resolves when the server answers again after a kill. */
  up(): Promise<void>;
  /** How requests are sent (default: `authedFetch`): the failover run counts every status and code through it. */
  fetch?: (url: string, init?: RequestInit, who?: Who) => Promise<Response>;
  /** Told once a run's stream ended, however it ended. */
  streamEnded?: (report: StreamReport) => void;
}

/** One run's event stream as its client saw it: every seq in order, and what ended it. */
export interface StreamReport {
  threadId: string;
  seqs: number[];
  /** The last event's type when it was RUN_FINISHED or RUN_ERROR; null when the stream ended without one. */
  terminal: string | null;
  /** A RUN_ERROR's code. */
  code?: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An answer for whatever the refund agent asks (approve, original payment, the order number, the sender is the customer, send). */
export function answerFor(pending: PendingInterruptView, orderId: string): unknown {
  switch (pending.action) {
    case "refund_approval":
      return { decision: "approve" };
    case "select_option": {
      // How to pay back, who the sender is (an order number typed by an operator), or "reply yourself".
      const ids = ((pending.payload as { options?: { id: string }[] } | null)?.options ?? []).map(
        (o) => o.id,
      );
      const pick = ["original_payment", "sender_is_customer", "replied"].find((id) => ids.includes(id));
      return { optionId: pick ?? "original_payment" };
    }
    case "input_text":
      return { text: orderId };
    case "confirm_email":
      return { choice: "send" };
    default:
      throw new Error(`unexpected interrupt ${pending.action}`);
  }
}

/** POST a run and read its stream until it ends or the connection drops; report events to `observe`. */
async function postAndWatch(
  target: Target,
  threadId: string,
  body: object,
  observe: Observer,
  who: Who = "resume" in body ? "supervisor" : "intake",
): Promise<number> {
  const res = await (target.fetch ?? authedFetch)(
    `${target.url}/api/threads/${threadId}/runs`,
    {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({
        threadId,
        runId: crypto.randomUUID(),
        messages: [],
        tools: [],
        context: [],
        ...body,
      }),
    },
    who,
  );
  if (res.status !== 200 || !res.body) {
    await res.text();
    return res.status;
  }
  const decoder = new TextDecoder();
  let buffer = "";
  const reader = res.body.getReader();
  const report: StreamReport = { threadId, seqs: [], terminal: null };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let cut = buffer.indexOf("\n\n");
      while (cut >= 0) {
        const lines = buffer.slice(0, cut).split("\n");
        const data = lines.find((l) => l.startsWith("data: "));
        const id = lines.find((l) => l.startsWith("id: "));
        buffer = buffer.slice(cut + 2);
        if (data) {
          const event = JSON.parse(data.slice(6)) as { type: string; code?: string };
          if (id) report.seqs.push(Number(id.slice(4)));
          report.terminal = event.type === "RUN_FINISHED" || event.type === "RUN_ERROR" ? event.type : null;
          if (event.type === "RUN_ERROR") report.code = event.code;
          observe(event);
        }
        cut = buffer.indexOf("\n\n");
      }
    }
  } finally {
    target.streamEnded?.(report);
  }
  return 200;
}

/**
 * Drive one ticket to the end like a patient operator: start it, answer each decision when it appears, and
 * otherwise wait. A request cut off by a kill is never repeated blindly: the thread's state says whether it was
 * taken (then recovery finishes the run by itself) or not (then the same decision is still pending and is answered
 * again). Returns when the thread is completed or failed.
 */
export async function driveThread(
  target: Target,
  ticket: { threadId: string; message: string; orderId: string },
  observe: Observer,
  deadline: number,
): Promise<"completed" | "failed"> {
  let last = "nothing yet";
  while (Date.now() < deadline) {
    try {
      const res = await (target.fetch ?? authedFetch)(`${target.url}/api/threads/${ticket.threadId}`);
      if (res.status !== 200) throw new Error(`state: ${res.status}`);
      const view = (await res.json()) as {
        status: string;
        activeRunId: string | null;
        lastSeq: number;
        pendingInterrupts: PendingInterruptView[];
      };
      if (view.status === "completed" || view.status === "failed") return view.status;
      last = `status ${view.status}, active run ${view.activeRunId}, pending ${view.pendingInterrupts.map((p) => p.action).join(",")}`;
      if (view.activeRunId) {
        await sleep(100);
        continue;
      }
      if (view.pendingInterrupts.length > 0) {
        const resume = view.pendingInterrupts.map((p) => ({
          interruptId: p.interruptId,
          status: "resolved",
          payload: answerFor(p, ticket.orderId),
        }));
        // An operator names the order; the supervisor approves (four-eyes: who named it may not approve it).
        const who = view.pendingInterrupts.some((p) => p.action === "input_text") ? "operator" : "supervisor";
        const status = await postAndWatch(target, ticket.threadId, { resume }, observe, who);
        last += `; resume answered ${status}`;
      } else if (view.lastSeq === 0) {
        const messages = [{ id: `m-${ticket.threadId}`, role: "user", content: ticket.message }];
        await postAndWatch(target, ticket.threadId, { messages }, observe);
      } else {
        await sleep(100);
      }
    } catch {
      await target.up().catch(() => {});
      await sleep(50);
    }
  }
  // Say where it stood: a thread that never finishes is a runtime bug to find, not a timeout to raise.
  throw new Error(`thread ${ticket.threadId} did not finish in time (last seen: ${last})`);
}
