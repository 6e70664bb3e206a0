import type { Logger } from "pino";
import { errorFields } from "@/lib/platform/observability/logger";

type Level = "debug" | "info" | "warn" | "error";

/**
 * Messages better-auth prints that describe a choice we made on purpose, logged at debug instead of their level.
 * Its "Base URL is not set" warning, at every start: the console is served from wherever it is reached (a laptop,
 * a proxy, a preview host), so the origin is derived from each request and checked by `trustedOrigins`.
 */
const EXPECTED = ["Base URL is not set"];

/**
 * better-auth's log calls as lines of the server's logger: JSON, with its level and redaction, instead of coloured
 * text on stderr. Arguments other than errors are reduced to their type: better-auth passes requests, users and
 * database rows, which hold emails and tokens.
 */
export function betterAuthLog(log: () => Logger) {
  return (level: Level, message: string, ...args: unknown[]): void => {
    const expected = EXPECTED.some((m) => message.includes(m));
    const error = args.find((a) => a instanceof Error);
    const others = args.filter((a) => !(a instanceof Error)).map((a) => (a === null ? "null" : typeof a));
    const fields = {
      component: "better-auth",
      ...(error ? errorFields(error) : {}),
      ...(others.length > 0 ? { args: others } : {}),
    };
    log()[expected ? "debug" : level](fields, message.replace(/^\[better-auth\]\s*/i, ""));
  };
}
