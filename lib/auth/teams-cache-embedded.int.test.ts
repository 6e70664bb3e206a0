import { randomUUID } from "node:crypto";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openBackend } from "@/e2e/support/backends";
import type { Queryable } from "@/lib/db/tx";
import { listenEmbedded } from "@/lib/runtime/process/listener";
import type { Principal } from "../contract/roles";
import { teamScope } from "./teams";

/*
 * A user's teams scope is read once and kept beside their session (issue 31: one statement fewer per request), and
 * any change to the teams tables — by the app or plain SQL, adding as well as removing — reaches it within 1 s, as a
 * revoked session does (the tables NOTIFY `hitl_auth`, migration 0035). On embedded PGlite, which hears its own
 * NOTIFYs; the HTTP teams suite covers the same on Postgres.
 */
describe("teams scope cache", () => {
  let backend: Awaited<ReturnType<typeof openBackend>>;

  beforeAll(async () => {
    backend = await openBackend("pglite");
    await listenEmbedded(backend.database);
  }, 120_000);
  afterAll(async () => {
    await backend?.close();
  });

  const sql = (text: string, params: unknown[] = []) => backend.database.sql.query(text, params);

  it("serves the scope from memory, and forgets it when any teams table changes", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(
          // the user joins the team that owns the agent: it is no longer hidden
          "INSERT INTO team_members (team_id, user_id) VALUES ($2::text, $1::text)",
          // the agent is taken from the team: visible again
          "DELETE FROM team_agents WHERE team_id = $2::text AND $1::text IS NOT NULL",
          // the team is deleted (its rows go by cascade)
          "DELETE FROM teams WHERE id = $2::text AND $1::text IS NOT NULL",
          // another agent is given to the team: hidden too
          "INSERT INTO team_agents (agent_id, team_id) SELECT 'other-' || $2::text, $2::text WHERE $1::text IS NOT NULL",
        ),
        async (change) => {
          const user = randomUUID();
          const team = randomUUID();
          await sql(
            "INSERT INTO auth_users (id, name, email, role) VALUES ($1, 'U', $1 || '@test.local', 'operator')",
            [user],
          );
          await sql("INSERT INTO teams (id, name, created_by) VALUES ($1, $1, 'test')", [team]);
          await sql("INSERT INTO team_agents (agent_id, team_id) VALUES ('agent-' || $1::text, $1::text)", [
            team,
          ]);
          const principal: Principal = { kind: "user", id: user, label: "U", role: "operator" } as Principal;
          let reads = 0;
          const db = {
            execute: (query: unknown) => {
              reads += 1;
              return (backend.database.db as unknown as Queryable).execute(query as never);
            },
          } as unknown as Queryable;
          const truth = async () =>
            (
              await backend.database.sql.query<{ agent_id: string }>(
                `SELECT ta.agent_id FROM team_agents ta WHERE NOT EXISTS
                  (SELECT 1 FROM team_members tm WHERE tm.team_id = ta.team_id AND tm.user_id = $1)`,
                [user],
              )
            )
              .map((r) => r.agent_id)
              .sort();
          const scoped = async () => [...(await teamScope(db, principal)).hiddenAgents].sort();
          expect(await scoped()).toEqual(await truth());
          expect(await scoped()).toContain(`agent-${team}`);
          // The second answer came from memory.
          expect(reads).toBe(1);
          await sql(change, [user, team]);
          const deadline = Date.now() + 1_000;
          while (reads === 1 && Date.now() < deadline) {
            await scoped();
            await new Promise((r) => setTimeout(r, 10));
          }
          expect(reads).toBeGreaterThan(1);
          expect(await scoped()).toEqual(await truth());
        },
      ),
      { numRuns: 12 },
    );
  });
});
