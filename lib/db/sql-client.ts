/**
 * The smallest surface the storage code needs from a driver: one parameterised statement, one round trip.
 * Both `pg` (Pool) and PGlite fit behind it, which is what lets one checkpointer run on either.
 */
export interface SqlClient {
  /**
   * Run one statement and return its rows. `name` lets `pg` keep a prepared statement per connection
   * (PGlite ignores it).
   */
  query<R = Record<string, unknown>>(text: string, params?: readonly unknown[], name?: string): Promise<R[]>;
}

/** SQLSTATE of an error thrown by either driver, if it has one. */
export function sqlState(error: unknown): string | undefined {
  if (typeof error === "object" && error !== null && "code" in error) {
    const code = (error as { code: unknown }).code;
    return typeof code === "string" ? code : undefined;
  }
  return undefined;
}
