/*
 * A live claim on a pending decision as the inbox, the thread page and the API show it. Types only: the server reads it
 * in lib/db/queries/claims.ts.
 */

/** A live claim as the inbox and the API show it. */
export interface ClaimView {
  interruptId: string;
  userId: string;
  userLabel: string;
  assignedBy: string | null;
  /** ISO 8601. */
  claimedAt: string;
  expiresAt: string;
}
