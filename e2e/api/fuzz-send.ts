import { connect } from "node:net";
import { BODY_LIMIT, type BodySpec } from "../support/hostile";
import type { HostileRequest } from "./fuzz-targets";

/*
 * Sending a generated request and timing it: through fetch, or over a raw socket when the request lies about its
 * Content-Length (fetch would refuse to). Every response body is read to its end (SSE streams included) within the
 * hang limit, so a stream that never ends counts as a hang.
 */

export const HANG_MS = 5_000;

export interface Outcome {
  status: number;
  ms: number;
  hang: boolean;
  /**
   * No answer in time to a request that declared more body than it sent: the server waits for bytes that never come
   * (as HTTP lets it; Node's request timeout ends it). Counted apart from hangs; see the fuzz suite's summary.
   */
  stalled?: boolean;
  /** The client could not send or read (e.g. the server closed while a refused body was still uploading). */
  clientError?: string;
  contentType: string;
  text: string;
}

/** The bytes of a body (big ones built only now). */
export function bodyBytes(spec: BodySpec): Buffer | FormData | undefined {
  switch (spec.kind) {
    case "json":
      return Buffer.from(JSON.stringify(spec.value) ?? "null");
    case "text":
      return Buffer.from(spec.text);
    case "bytes":
      return Buffer.from(spec.bytes);
    case "deep": {
      const n = spec.depth;
      if (spec.shape === "array") return Buffer.from(`${"[".repeat(n)}${"]".repeat(n)}`);
      if (spec.shape === "object") return Buffer.from(`${'{"a":'.repeat(n)}1${"}".repeat(n)}`);
      if (spec.shape === "unclosed") return Buffer.from("[".repeat(n));
      return Buffer.from(JSON.stringify({ message: "[{".repeat(n) }));
    }
    case "huge": {
      const frame = '{"message":""}';
      return Buffer.from(`{"message":"${"x".repeat(Math.max(0, spec.bytes - frame.length))}"}`);
    }
    case "form": {
      const form = new FormData();
      for (const [k, v] of spec.fields) form.append(k, v);
      return form;
    }
    case "none":
      return undefined;
  }
}

/** A header value fetch accepts (no NUL, CR, LF, nothing above U+00FF). */
export function headerSafe(value: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: these are the bytes a header cannot carry
  return value.replace(/[\u0000\r\n]|[^\u0000-\u00ff]/g, "?").trim();
}

export async function send(
  base: string,
  request: HostileRequest,
  headers: Record<string, string>,
): Promise<Outcome> {
  const started = performance.now();
  const body = request.body ? bodyBytes(request.body) : undefined;
  const all: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) all[k] = headerSafe(v);
  if (request.contentType !== undefined && request.contentType !== null && !(body instanceof FormData)) {
    all["content-type"] = request.contentType;
  }
  const lie = request.body?.kind === "huge" ? request.body.lie : undefined;
  if (lie && body instanceof Buffer) return raw(base, request, all, body, lie, started);
  const signal = AbortSignal.timeout(HANG_MS);
  try {
    const res = await fetch(`${base}${request.path}`, {
      method: request.method,
      headers: all,
      body:
        request.method === "GET" || request.method === "HEAD" ? undefined : (body as BodyInit | undefined),
      redirect: "manual",
      signal,
    });
    const text = await res.text();
    const ms = performance.now() - started;
    return {
      status: res.status,
      ms,
      hang: ms > HANG_MS,
      contentType: res.headers.get("content-type") ?? "",
      text,
    };
  } catch (error) {
    const ms = performance.now() - started;
    if (signal.aborted) return { status: 0, ms, hang: true, contentType: "", text: "" };
    return {
      status: 0,
      ms,
      hang: false,
      clientError: String((error as Error).cause ?? error),
      contentType: "",
      text: "",
    };
  }
}

/** HTTP/1.1 over a socket with a Content-Length that lies (or a chunked body), read until the response is complete. */
function raw(
  base: string,
  request: HostileRequest,
  headers: Record<string, string>,
  body: Buffer,
  lie: "small" | "large" | "chunked" | "invalid",
  started: number,
): Promise<Outcome> {
  const url = new URL(base);
  const lines = [`${request.method} ${request.path} HTTP/1.1`, `host: ${url.host}`, "connection: close"];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  const declared = { small: "1000", large: String(BODY_LIMIT * 40), invalid: "12abc" } as const;
  lines.push(lie === "chunked" ? "transfer-encoding: chunked" : `content-length: ${declared[lie]}`);
  const head = Buffer.from(`${lines.join("\r\n")}\r\n\r\n`);
  return new Promise((resolve) => {
    const socket = connect(Number(url.port), url.hostname);
    let received = Buffer.alloc(0);
    let done = false;
    const finish = (outcome: Omit<Outcome, "ms">) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const ms = performance.now() - started;
      resolve({ ...outcome, ms, hang: outcome.hang || (!outcome.stalled && ms > HANG_MS) });
    };
    const timer = setTimeout(
      () =>
        finish(
          lie === "large"
            ? { status: 0, hang: false, stalled: true, contentType: "", text: "" }
            : { status: 0, hang: true, contentType: "", text: "" },
        ),
      HANG_MS,
    );
    const complete = () => {
      const text = received.toString("latin1");
      const end = text.indexOf("\r\n\r\n");
      if (end < 0) return false;
      const status = Number(text.match(/^HTTP\/1\.[01] (\d{3})/)?.[1] ?? 0);
      const length = text.slice(0, end).match(/\r\ncontent-length: *(\d+)/i)?.[1];
      const chunked = /\r\ntransfer-encoding: *chunked/i.test(text.slice(0, end));
      const rest = text.slice(end + 4);
      if ((length && rest.length >= Number(length)) || (chunked && rest.includes("0\r\n\r\n"))) {
        const type = text.slice(0, end).match(/\r\ncontent-type: *([^\r]*)/i)?.[1] ?? "";
        finish({ status, hang: false, contentType: type, text: rest.slice(0, 2000) });
        return true;
      }
      return false;
    };
    socket.on("data", (chunk) => {
      received = Buffer.concat([received, chunk]);
      complete();
    });
    socket.on("error", () => {
      if (!complete())
        finish({ status: 0, hang: false, clientError: "socket error", contentType: "", text: "" });
    });
    socket.on("close", () => {
      if (complete()) return;
      const status = Number(received.toString("latin1").match(/^HTTP\/1\.[01] (\d{3})/)?.[1] ?? 0);
      finish({
        status,
        hang: false,
        ...(status ? {} : { clientError: "closed" }),
        contentType: "",
        text: "",
      });
    });
    socket.on("connect", () => {
      socket.write(head);
      if (lie !== "chunked") {
        // "large" declares far more than it sends: the API routes refuse it from the header at once.
        socket.write(lie === "large" ? body.subarray(0, 1000) : body);
        return;
      }
      for (let i = 0; i < body.length; i += 64 * 1024) {
        const part = body.subarray(i, i + 64 * 1024);
        socket.write(`${part.length.toString(16)}\r\n`);
        socket.write(part);
        socket.write("\r\n");
      }
      socket.write("0\r\n\r\n");
    });
  });
}

/** One line per request, enough to reproduce it. */
export function describeRequest(request: HostileRequest, headers: Record<string, string>): string {
  const shown = Object.fromEntries(
    Object.entries(headers).map(([k, v]) => [
      k,
      k === "cookie" || k === "authorization" ? `${v.slice(0, 24)}…` : v,
    ]),
  );
  let body = "";
  if (request.body) {
    const b = request.body;
    if (b.kind === "json") body = (JSON.stringify(b.value) ?? "").slice(0, 400);
    else if (b.kind === "text") body = JSON.stringify(b.text.slice(0, 400));
    else body = JSON.stringify(b).slice(0, 400);
    body = ` body(${b.kind}, ${request.contentType ?? "no content-type"})=${body}`;
  }
  return `${request.method} ${request.path.slice(0, 400)} as ${request.sender} headers=${JSON.stringify(shown)}${body}`;
}
