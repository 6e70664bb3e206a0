"use client";

import type { FormEvent } from "react";
import { Button } from "@/components/ui/button";
import { fetchJson, postJson } from "@/components/ui/fetch-json";
import { controlClass, FieldLabel } from "@/components/ui/field";
import { hasRole, type Role } from "@/lib/contract/roles";
import type { TeamView } from "@/lib/contract/views/settings";
import { useAdminAction } from "./use-admin-action";

interface Person {
  id: string;
  email: string;
  role: string;
}

/**
 * Teams (admins): create a team, choose its members and the agents it owns. A team's agents' threads are seen and
 * decided by its members only (and by those whose role sees every team); an agent no team owns stays everyone's.
 */
export function TeamsPanel({
  teams,
  users,
  agents,
  seeAllRole,
}: {
  teams: TeamView[];
  users: Person[];
  agents: { id: string; title: string }[];
  /** The lowest role that sees every team's threads. */
  seeAllRole: string;
}) {
  const { act, busy, error } = useAdminAction();

  const create = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const name = String(new FormData(form).get("teamName") ?? "");
    void act(async () => {
      await postJson("/api/admin/teams", { name });
      form.reset();
    });
  };

  const save = (team: TeamView, event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const data = new FormData(event.currentTarget);
    // Said before it is saved: who stops seeing which agent's threads because of this change.
    const losing = hiddenBy(team, data.getAll("member").map(String), data.getAll("agent").map(String));
    if (
      losing.length > 0 &&
      !window.confirm(
        `Saving ${team.name} hides threads from people who see them now:\n${losing
          .map((l) => `• ${l.email} (${l.role}) no longer sees ${l.agents.join(", ")}`)
          .join("\n")}\nSave anyway?`,
      )
    )
      return;
    void act(() =>
      fetchJson(`/api/admin/teams/${encodeURIComponent(team.id)}`, {
        method: "PATCH",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          members: data.getAll("member").map(String),
          agents: data.getAll("agent").map(String),
        }),
      }),
    );
  };

  const remove = (team: TeamView) =>
    act(() => fetchJson(`/api/admin/teams/${encodeURIComponent(team.id)}`, { method: "DELETE" }));

  const ownerOf = (agentId: string) => teams.find((t) => t.agents.includes(agentId));
  /** Whether a user sees an agent's threads, given who owns it and its owner's members. */
  const sees = (user: Person, owner: { members: string[] } | undefined) =>
    !owner || owner.members.includes(user.id) || hasRole(user.role as Role, seeAllRole as Role);
  /** The people this team's new members and agents would hide threads from, with which agents'. */
  const hiddenBy = (team: TeamView, members: string[], owned: string[]) =>
    users.flatMap((user) => {
      const agentsLost = agents
        .filter((agent) => {
          const owner = ownerOf(agent.id);
          const before = sees(user, owner && { members: owner.members.map((m) => m.userId) });
          // After saving: this team owns what is ticked; what it stops owning is everyone's.
          const after = owned.includes(agent.id)
            ? sees(user, { members })
            : owner?.id === team.id
              ? true
              : before;
          return before && !after;
        })
        .map((agent) => agent.title);
      return agentsLost.length > 0 ? [{ email: user.email, role: user.role, agents: agentsLost }] : [];
    });
  return (
    <section aria-labelledby="teams-heading" className="space-y-3" data-testid="teams-panel">
      <h2 id="teams-heading" className="text-lg font-semibold text-slate-900">
        Teams
      </h2>
      <p className="text-sm text-slate-700">
        A team owns agents: only its members see and decide their threads — in the inbox, search, the thread
        pages and the API. An agent no team owns is everyone&apos;s. Users with the {seeAllRole} role see
        every team&apos;s threads.
      </p>
      {error && (
        <p role="alert" className="rounded-md bg-red-50 p-3 text-sm text-red-900" data-testid="teams-error">
          {error}
        </p>
      )}
      <form onSubmit={create} className="flex flex-wrap items-end gap-2">
        <div>
          <FieldLabel htmlFor="team-name">New team</FieldLabel>
          <input
            id="team-name"
            name="teamName"
            required
            maxLength={80}
            data-testid="team-name"
            className={controlClass}
          />
        </div>
        <Button type="submit" disabled={busy} data-testid="team-create">
          Create team
        </Button>
      </form>
      {teams.length === 0 && (
        <p className="text-sm text-slate-700">No teams yet: every user sees every thread.</p>
      )}
      <ul className="space-y-4">
        {teams.map((team) => (
          <li
            key={team.id}
            className="rounded-lg border border-slate-200 bg-white p-4"
            data-testid="team"
            data-team={team.name}
          >
            <form onSubmit={(e) => save(team, e)} className="space-y-3">
              <h3 className="font-semibold text-slate-900">
                <bdi>{team.name}</bdi>
              </h3>
              <div className="grid gap-4 sm:grid-cols-2">
                <fieldset>
                  <legend className="text-sm font-medium text-slate-900">Members</legend>
                  <ul className="mt-1 space-y-1">
                    {users.map((user) => (
                      <li key={user.id}>
                        <label className="flex items-center gap-2 text-sm text-slate-800">
                          <input
                            type="checkbox"
                            name="member"
                            value={user.id}
                            defaultChecked={team.members.some((m) => m.userId === user.id)}
                            data-testid="team-member"
                            data-email={user.email}
                            className="size-4 accent-indigo-700"
                          />
                          <bdi>{user.email}</bdi> <span className="text-slate-600">({user.role})</span>
                        </label>
                      </li>
                    ))}
                  </ul>
                </fieldset>
                <fieldset>
                  <legend className="text-sm font-medium text-slate-900">Agents it owns</legend>
                  <ul className="mt-1 space-y-1">
                    {agents.map((agent) => {
                      const owner = ownerOf(agent.id);
                      return (
                        <li key={agent.id}>
                          <label className="flex items-center gap-2 text-sm text-slate-800">
                            <input
                              type="checkbox"
                              name="agent"
                              value={agent.id}
                              defaultChecked={owner?.id === team.id}
                              data-testid="team-agent"
                              data-agent={agent.id}
                              className="size-4 accent-indigo-700"
                            />
                            {agent.title}
                            {owner && owner.id !== team.id && (
                              <span className="text-slate-600">
                                (now <bdi>{owner.name}</bdi>&apos;s: ticking moves it here)
                              </span>
                            )}
                          </label>
                        </li>
                      );
                    })}
                  </ul>
                </fieldset>
              </div>
              <div className="flex flex-wrap gap-2">
                <Button type="submit" disabled={busy} data-testid="team-save">
                  Save {team.name}
                </Button>
                <Button
                  variant="secondary"
                  disabled={busy}
                  data-testid="team-delete"
                  onClick={() => {
                    if (window.confirm(`Delete the team “${team.name}”? Its agents become everyone's.`))
                      void remove(team);
                  }}
                >
                  Delete
                </Button>
              </div>
            </form>
          </li>
        ))}
      </ul>
    </section>
  );
}
