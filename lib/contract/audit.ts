/**
 * The kinds of audit trail entry (every entry the server records is one of them): the wire's words, which the audit
 * page and `GET /api/audit?action=` filter on.
 */
export const AUDIT_ACTIONS = [
  "ticket_created",
  "run_started",
  "thread_closed",
  "decision",
  "fork",
  "thread_migrated",
  "migration_failed",
  "prune",
  "sign_in",
  "sign_in_failed",
  "sign_out",
  "user_created",
  "role_changed",
  "user_disabled",
  "key_issued",
  "key_revoked",
  "effect_failed",
  "effect_task",
  "erasure",
  "archive",
  "claim_assigned",
  "decision_escalated",
  "queue_settings",
  "run_cancel",
  "input_queued",
  "team_changed",
  "authority_changed",
  "keys_rotated",
  "data_sealed",
  "provider_event",
  "provider_finding",
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];
