-- Any change to the teams (a team made or deleted, a member added or removed, an agent given to a team or taken back
-- — by the app or plain SQL) announces itself on `hitl_auth` like a session change (0017): servers cache a user's
-- teams scope beside their session (lib/auth/teams.ts) and empty that cache when they hear it. Inserts too: a new
-- owner of an agent hides its threads from everyone outside the team.
CREATE TRIGGER teams_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON teams
  FOR EACH STATEMENT EXECUTE FUNCTION hitl_auth_changed();
--> statement-breakpoint
CREATE TRIGGER team_members_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON team_members
  FOR EACH STATEMENT EXECUTE FUNCTION hitl_auth_changed();
--> statement-breakpoint
CREATE TRIGGER team_agents_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON team_agents
  FOR EACH STATEMENT EXECUTE FUNCTION hitl_auth_changed();
