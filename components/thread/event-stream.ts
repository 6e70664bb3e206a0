import { AppError } from "@/lib/contract/errors";
import type { StreamEvent } from "./apply-event";
import type { ThreadViewJson } from "./thread-state";

/** A failure worth retrying (the network, or the server restarting), as opposed to a refusal. */
export class StreamBroken extends Error {
  override name = "StreamBroken";
  readonly code = STREAM_BROKEN;
}

/** The code a broken stream's error carries: told apart by it, never by its class. */
const STREAM_BROKEN = "unavailable:stream_broken";

export function isStreamBroken(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === STREAM_BROKEN;
}

async function refusal(res: Response): Promise<AppError> {
  const body = await res.json().catch(() => null);
  return AppError.fromBody(body, res.status);
}

/** 5xx and 429 come and go (a restarting server, a proxy); 4xx refusals do not. */
function retryable(status: number): boolean {
  return status >= 500 || status === 429;
}

/**
 * Read `GET /api/threads/{id}/events?after=<seq>` to its end, handing every event to `onEvent` as it arrives. The
 * seq comes from the SSE `id:` line (and `metadata.seq`). Resolves when the server ends the stream; throws
 * {@link StreamBroken} when the connection fails, an {@link AppError} when the server refuses.
 */
export async function readEventStream(
  url: string,
  signal: AbortSignal,
  onEvent: (event: StreamEvent) => void,
): Promise<void> {
  let res: Response;
  try {
    res = await fetch(url, { headers: { accept: "text/event-stream" }, cache: "no-store", signal });
  } catch (error) {
    throw new StreamBroken(error instanceof Error ? error.message : "network error");
  }
  if (!res.ok) {
    const error = await refusal(res);
    throw retryable(res.status) ? new StreamBroken(error.message) : error;
  }
  if (!res.body) throw new StreamBroken("the response has no body");
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      for (let cut = buffer.indexOf("\n\n"); cut >= 0; cut = buffer.indexOf("\n\n")) {
        const frame = parseFrame(buffer.slice(0, cut));
        buffer = buffer.slice(cut + 2);
        if (frame) onEvent(frame);
      }
    }
  } catch (error) {
    if (signal.aborted) throw error;
    throw new StreamBroken(error instanceof Error ? error.message : "the stream broke");
  }
}

/** One SSE frame → an event with its seq; comments (keep-alives) and frames without data give null. */
function parseFrame(block: string): StreamEvent | null {
  let id: number | undefined;
  const data: string[] = [];
  for (const line of block.split("\n")) {
    if (line.startsWith("id:")) id = Number(line.slice(3).trim());
    else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
  }
  if (data.length === 0) return null;
  const event = JSON.parse(data.join("\n")) as StreamEvent;
  // A failure frame of the stream itself has no seq: the tail broke, not the run. Reconnect and read on.
  if (id === undefined && event.type === "RUN_ERROR") throw new StreamBroken(String(event.message ?? ""));
  if (id === undefined || !Number.isSafeInteger(id)) return event;
  return { ...event, metadata: { ...event.metadata, seq: id } };
}

/** `GET /api/threads/{id}`: the server's view of the thread. */
export async function fetchThreadView(threadId: string, signal: AbortSignal): Promise<ThreadViewJson> {
  let res: Response;
  try {
    res = await fetch(`/api/threads/${encodeURIComponent(threadId)}`, { cache: "no-store", signal });
  } catch (error) {
    throw new StreamBroken(error instanceof Error ? error.message : "network error");
  }
  if (!res.ok) {
    const error = await refusal(res);
    throw retryable(res.status) ? new StreamBroken(error.message) : error;
  }
  return (await res.json()) as ThreadViewJson;
}
