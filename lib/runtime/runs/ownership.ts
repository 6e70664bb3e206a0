/** Thrown when another process took a run over (its lease expired): this one must stop and write nothing more. */
export class LostOwnershipError extends Error {
  override name = "LostOwnershipError";
  readonly code = LOST_OWNERSHIP;
}

/** The code a lost run's error carries: told apart by it, never by its class (a bundle may hold two copies). */
export const LOST_OWNERSHIP = "internal:lost_ownership";

export function isLostOwnership(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === LOST_OWNERSHIP;
}

/**
 * Thrown when a run's execution stopped because the database went away or stopped answering mid-step (a failover, a
 * pooler restart, a statement past its limit): nothing more is written here, and the run is handed to recovery, which
 * continues it from its last committed checkpoint — it did not fail.
 */
export class RunHandedOverError extends Error {
  override name = "RunHandedOverError";
  readonly code = RUN_HANDED_OVER;
}

export const RUN_HANDED_OVER = "internal:run_handed_over";

export function isHandedOver(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === RUN_HANDED_OVER;
}
