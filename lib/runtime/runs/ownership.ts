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
