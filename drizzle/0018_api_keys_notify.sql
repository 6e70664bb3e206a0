-- Revoking or deleting an intake key announces itself on `hitl_auth` like a session change (0017): servers cache
-- verified keys for a few seconds (lib/auth/api-keys.ts) and empty that cache when they hear it. Only the columns
-- that decide whether a key is valid fire it: the `last_used_at` write of each verification does not.
CREATE TRIGGER api_keys_changed AFTER UPDATE OF revoked_at, key_hash OR DELETE OR TRUNCATE ON api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION hitl_auth_changed();
