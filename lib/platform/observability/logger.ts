import "server-only";
import { isSpanContextValid, trace } from "@opentelemetry/api";
import pino, { type Logger } from "pino";
import { env } from "@/lib/platform/env";
import { singleton } from "@/lib/platform/singleton";

/**
 * The server's one logger (pino): a JSON line per entry with `level`, `time`, `msg`, the `threadId` / `runId` a
 * call names and the `traceId` / `spanId` of the active span (a run's work runs inside its trace, so its lines carry
 * it without being told). No secrets and no message bodies: call sites log ids, codes and counts, and the keys that
 * could hold a secret or a customer's words are redacted whatever a caller passes.
 */
const REDACT = [
  ...[
    "password",
    "secret",
    "token",
    "authorization",
    "cookie",
    "apiKey",
    "text",
    "content",
    "email",
    "payload",
  ].flatMap((k) => [k, `*.${k}`]),
  // `msg` is the line itself; a top-level `message` would be someone's words.
  "message",
];

/** A logger with the server's settings, writing to `destination` (default stdout; tests pass their own). */
export function createLogger(destination?: pino.DestinationStream, level: string = env.LOG_LEVEL): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: { paths: REDACT, censor: "[redacted]" },
    mixin(_context, level) {
      // Cheap when no span is active (background timers): one lookup in the context manager.
      const span = trace.getActiveSpan();
      if (!span || level < 20) return {};
      const context = span.spanContext();
      return isSpanContextValid(context) ? { traceId: context.traceId, spanId: context.spanId } : {};
    },
  };
  return pino(options, destination ?? stdoutDestination());
}

/**
 * Standard output that never stops the process: when whoever read it is gone (`npm start | cat`, and the `cat` ended at
 * Ctrl-C), a write fails with EPIPE — the lines have nowhere to go, and the shutdown that is logging them must go on.
 */
function stdoutDestination(): pino.DestinationStream {
  const out = pino.destination({ dest: 1, sync: true });
  out.on("error", () => {
    // Nothing to tell: the reader of our output is gone.
  });
  return out;
}

/** The process's logger (one per process, shared by instrumentation.ts and the route bundles). */
export function logger(): Logger {
  return singleton("logger", () => createLogger());
}

/** Ids of a run for a log line (its trace id too, for lines written outside the run's own context). */
export function runFields(run: { id: string; threadId: string; traceId?: string | null }) {
  return { runId: run.id, threadId: run.threadId, ...(run.traceId ? { traceId: run.traceId } : {}) };
}

/** An error for a log line: its name, code, message and stack, never a request or a payload it may carry. */
export function errorFields(error: unknown) {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    const cause = (error as { cause?: unknown }).cause as { message?: unknown; code?: unknown } | undefined;
    const message = withoutParams(error.message);
    return {
      error: {
        name: error.name,
        message,
        ...(code ? { code: String(code) } : {}),
        // A failed query's own reason (the database's message and SQLSTATE: no row values — its `detail` has them).
        ...(cause && typeof cause.message === "string"
          ? { cause: { message: cause.message, ...(cause.code ? { code: String(cause.code) } : {}) } }
          : {}),
        stack: error.stack?.replace(error.message, message),
      },
    };
  }
  return { error: { message: withoutParams(String(error)) } };
}

/**
 * A failed query's message without its parameters: Drizzle writes them after the SQL ("Failed query: …\nparams: …"),
 * and they are the row's values — a customer's name and email.
 */
function withoutParams(message: string): string {
  const at = message.indexOf("\nparams: ");
  return message.startsWith("Failed query: ") && at >= 0
    ? `${message.slice(0, at)}\nparams: (not logged)`
    : message;
}

/**
 * An error the server did not expect (a bug, a database fault), as one error line: where it surfaced, its name, code,
 * message and stack. Not its other fields: a database error's `detail` quotes the row it refused (a customer's
 * email, say), and a validation error carries its input.
 */
export function logUnexpected(error: unknown, context: string): void {
  logger().error({ context, ...errorFields(error) }, "unexpected error");
}
