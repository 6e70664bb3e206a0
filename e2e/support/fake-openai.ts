import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** The JSON body of a chat completions request, as the fake received it. */
export interface ChatRequest {
  model?: string;
  stream?: boolean;
  messages: { role: string; content: unknown }[];
  [key: string]: unknown;
}

/** A reply: the text (split into word-sized tokens when streamed), or the exact tokens to stream. */
export type FakeReply = string | string[];

export interface FakeOpenAI {
  /** Pass as `baseURL` (ends in `/v1`). */
  baseURL: string;
  /** Every chat completions request received, in order. */
  requests: ChatRequest[];
  /** Set the reply: fixed, or computed per request (e.g. JSON for a classifier, prose for a writer). */
  setReply(reply: FakeReply | ((request: ChatRequest) => FakeReply)): void;
  /** Answer every request with this HTTP error status from now on (null: answer normally again). */
  setFailure(status: number | null): void;
  /** Take every request from now on and never answer it (a hung provider); false: answer normally again. */
  setHang(hang: boolean): void;
  close(): Promise<void>;
}

/**
 * The refund agent's two model calls answered: the classifier (its system prompt says "classify") gets a refund
 * request for the order the customer named (ORD-1002 when none), the reply writer gets `reply`.
 */
export function refundAgentReplies(
  reply: FakeReply,
  reason = "it stopped working",
): (request: ChatRequest) => FakeReply {
  return (request) => {
    const system = String(request.messages.find((m) => m.role === "system")?.content ?? "");
    // The order the customer named (each test refunds its own order: a fully refunded one has nothing left).
    const asked = JSON.stringify(request.messages.filter((m) => m.role === "user")).match(/ORD-\d{4}/)?.[0];
    return system.includes("classify")
      ? `{"intent":"refund","reason":"${reason}","orderRef":"${asked ?? "ORD-1002"}","requestedAmount":null}`
      : reply;
  };
}

/** Word-sized tokens with their leading space, the way OpenAI streams prose. */
export function tokenize(text: string): string[] {
  return text.match(/\s*\S+/g) ?? [text];
}

/**
 * A tiny OpenAI-compatible server for tests: `POST /v1/chat/completions`, streamed (SSE `data: {...}` chunks, then
 * `data: [DONE]`) or not. Bound to 127.0.0.1 on a free port.
 */
export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const requests: ChatRequest[] = [];
  let replyFor: (request: ChatRequest) => FakeReply = () => "OK";
  let counter = 0;
  let failure: number | null = null;
  let hang = false;

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: String(error), type: "server_error" } }));
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse) {
    if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}`, type: "not_found" } }));
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const request = JSON.parse(Buffer.concat(chunks).toString("utf8")) as ChatRequest;
    requests.push(request);
    if (hang) return; // the connection stays open, unanswered, until the client gives up
    if (failure !== null) {
      res.writeHead(failure, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: "the fake model is down", type: "server_error" } }));
      return;
    }
    const reply = replyFor(request);
    const tokens = typeof reply === "string" ? tokenize(reply) : reply;
    const id = `chatcmpl-fake-${++counter}`;
    const base = { id, created: Math.floor(Date.now() / 1000), model: request.model ?? "fake" };
    const usage = { prompt_tokens: 10, completion_tokens: tokens.length, total_tokens: 10 + tokens.length };

    if (!request.stream) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          ...base,
          object: "chat.completion",
          choices: [
            { index: 0, message: { role: "assistant", content: tokens.join("") }, finish_reason: "stop" },
          ],
          usage,
        }),
      );
      return;
    }
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      connection: "close",
    });
    const send = (choices: unknown[], extra: Record<string, unknown> = {}) =>
      res.write(
        `data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", choices, ...extra })}\n\n`,
      );
    send([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]);
    for (const token of tokens) send([{ index: 0, delta: { content: token }, finish_reason: null }]);
    send([{ index: 0, delta: {}, finish_reason: "stop" }]);
    const options = request.stream_options as { include_usage?: boolean } | undefined;
    if (options?.include_usage) send([], { usage });
    res.end("data: [DONE]\n\n");
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    setReply(reply) {
      replyFor = typeof reply === "function" ? reply : () => reply;
    },
    setFailure(status) {
      failure = status;
    },
    setHang(next) {
      hang = next;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
