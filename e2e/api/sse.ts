import { authedFetch } from "../support/auth";
/** A parsed SSE event from our streams: its `id:` (the per-thread seq) and the AG-UI event. */
export interface SseEvent {
  seq: number;
  event: { type: string; [key: string]: unknown };
}

/**
 * Read an SSE response, calling `onEvent` per event; resolves when the stream ends or `stop()` is called from the
 * callback (the connection is then aborted, like a tab going away).
 */
export async function readSse(
  url: string,
  init: RequestInit,
  onEvent: (e: SseEvent, stop: () => void) => void,
  options: { maxMs?: number } = {},
): Promise<number> {
  const abort = new AbortController();
  const res = await authedFetch(url, { ...init, signal: abort.signal });
  if (!res.body) return res.status;
  let stopped = false;
  const stop = () => {
    stopped = true;
    abort.abort();
  };
  const timer = options.maxMs ? setTimeout(stop, options.maxMs) : undefined;
  try {
    await readSseBody(
      res.body,
      (e) => onEvent(e, stop),
      () => stopped,
    );
  } catch (error) {
    if (!stopped) throw error;
  } finally {
    clearTimeout(timer);
  }
  return res.status;
}

/** Read an SSE body to its end (or until `stopped()`), calling `onEvent` per event that has an id and data. */
export async function readSseBody(
  body: ReadableStream<Uint8Array>,
  onEvent: (e: SseEvent) => void,
  stopped: () => boolean = () => false,
): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  while (!stopped()) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    for (let cut = buffer.indexOf("\n\n"); cut >= 0 && !stopped(); cut = buffer.indexOf("\n\n")) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const id = block.match(/^id: (\d+)$/m)?.[1];
      const data = block.match(/^data: (.*)$/m)?.[1];
      if (id && data) onEvent({ seq: Number(id), event: JSON.parse(data) });
    }
  }
}
