import "server-only";
import { z } from "zod";
import { issuesMessage } from "../contract/wire";
import { envShape } from "./env-settings";

/**
 * The only reader of `process.env`. Everything else imports `env` from here, so a typo or a bad value fails at
 * start-up with one clear message instead of somewhere deep in a request.
 */
const schema = z.object(envShape);

export type Env = z.infer<typeof schema>;

function readEnv(): Env {
  const parsed = schema.safeParse(process.env);
  if (!parsed.success) {
    throw new Error(`Invalid environment: ${issuesMessage(parsed.error)}`);
  }
  return parsed.data;
}

export const env: Env = readEnv();

/**
 * Where LISTEN connects: DATABASE_LISTEN_URL, else DATABASE_URL — unless that goes through a transaction pooler, where
 * a LISTEN would be lost with its server connection: then nowhere, and streams, the live inbox and the session cache
 * fall back to polling (the cache does not serve without a listener).
 */
export function listenUrl(e: Pick<Env, "DATABASE_URL" | "DATABASE_LISTEN_URL" | "DATABASE_POOLER"> = env) {
  if (!e.DATABASE_URL) return undefined;
  if (e.DATABASE_LISTEN_URL) return e.DATABASE_LISTEN_URL;
  return e.DATABASE_POOLER === "transaction" ? undefined : e.DATABASE_URL;
}
