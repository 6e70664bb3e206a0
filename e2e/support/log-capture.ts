import { Writable } from "node:stream";
import { createLogger } from "@/lib/platform/observability/logger";

/** A logger with the server's settings whose lines are kept, parsed, in `lines` (one object per line). */
export function captureLog(level = "info") {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { log: createLogger(stream, level), lines };
}
