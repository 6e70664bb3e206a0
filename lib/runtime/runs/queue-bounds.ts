import "server-only";
import { AppError } from "@/lib/contract/errors";
import type { Principal } from "@/lib/contract/roles";
import { takeRateLimitedRequest } from "@/lib/db/queries/rate-limits";
import type { Tx } from "@/lib/db/tx";
import { env } from "@/lib/platform/env";

/*
 * Double texting is bounded (issue 50): without a bound, one thread took 200 messages in a row (200 queued inputs,
 * 200 audit entries), each of which would run the agent. A thread holds at most QUEUED_INPUTS_MAX waiting inputs, and
 * a principal queues at most QUEUED_INPUTS_PER_MINUTE inputs a minute across every thread — counted in the rate-limit
 * table better-auth keeps its per-address limits in, by the same kind of statement. Both refuse with 429 before the
 * input is written, inside the claim's transaction: a refusal, or anything that refuses after it, leaves nothing.
 */

/** The window QUEUED_INPUTS_PER_MINUTE counts in. */
const RATE_WINDOW_MS = 60_000;

/**
 * Refuse new input the thread's queue has no room for (`waiting` inputs already wait there: 429
 * `rate_limited:queue_full`), or that the principal may not queue now (429 `rate_limited:queue_rate`, with
 * `retryAfterSeconds`); otherwise count it against the principal's rate. Call under the thread's lock, in the
 * transaction that queues the input.
 */
export async function assertQueueRoom({
  tx,
  waiting,
  principal,
}: {
  tx: Tx;
  waiting: number;
  principal: Principal;
}): Promise<void> {
  if (waiting >= env.QUEUED_INPUTS_MAX) {
    throw new AppError(
      "rate_limited:queue_full",
      `${waiting} messages already wait on this thread; send more once they have run.`,
      { limit: env.QUEUED_INPUTS_MAX },
    );
  }
  const rate = await takeRateLimitedRequest({
    db: tx,
    key: `queued-input|${principal.id}`,
    windowMs: RATE_WINDOW_MS,
    max: env.QUEUED_INPUTS_PER_MINUTE,
  });
  if (!rate.allowed) {
    const retryAfterSeconds = Math.max(1, Math.ceil(rate.retryAfterMs / 1000));
    throw new AppError(
      "rate_limited:queue_rate",
      `You queued ${env.QUEUED_INPUTS_PER_MINUTE} messages in the last minute; try again in ${retryAfterSeconds} s.`,
      { limit: env.QUEUED_INPUTS_PER_MINUTE, windowSeconds: RATE_WINDOW_MS / 1000, retryAfterSeconds },
    );
  }
}
