import { randomUUID } from "node:crypto";
import type { Backend } from "@/e2e/support/backends";
import { openBackend } from "@/e2e/support/backends";
import type { Principal } from "@/lib/contract/roles";
import type { Database } from "@/lib/db/open";
import { authUsers, threads } from "../schema";
import { emailsOfRole } from "./notifications";
import { createTeam, deleteTeam, listTeams, updateTeam } from "./teams";

/*
 * Teams in the database (issue 33): a team's escalation emails go to its own supervisors (and to the roles that see
 * every team), never to another team's; an agent no team owns mails every supervisor. Both databases.
 */
describe.each<Backend>(["pglite", "postgres"])("teams on %s", (kind) => {
  let backend: Awaited<ReturnType<typeof openBackend>>;
  let database: Database;
  const admin: Principal = { kind: "user", id: "u-admin", label: "admin@x.test", role: "admin" };
  beforeAll(async () => {
    backend = await openBackend(kind);
    database = backend.database;
  }, 120_000);
  afterAll(() => backend?.close());

  it("sends a team's escalations to its own supervisors and the roles that see every team, not another team's", async () => {
    const { db } = database;
    const user = (id: string, role: string) => ({ id, name: id, email: `${id}@x.test`, role });
    await db
      .insert(authUsers)
      .values([
        user("u-admin", "admin"),
        user("sup-refunds", "supervisor"),
        user("sup-accounts", "supervisor"),
        user("sup-none", "supervisor"),
      ]);
    const thread = (agentId: string) => ({
      id: randomUUID(),
      agentId,
      title: "t",
      customerMessage: "m",
    });
    const refund = thread("refund");
    const account = thread("account_change");
    const voucher = thread("goodwill");
    await db.insert(threads).values([refund, account, voucher]);
    const refunds = await createTeam({ db, name: "Refunds", by: admin });
    const accounts = await createTeam({ db, name: "Accounts", by: admin });
    const known = ["refund", "account_change", "goodwill"];
    await updateTeam({
      db,
      teamId: refunds.id,
      members: ["sup-refunds"],
      agents: ["refund"],
      knownAgents: known,
      by: admin,
    });
    await updateTeam({
      db,
      teamId: accounts.id,
      members: ["sup-accounts"],
      agents: ["account_change"],
      knownAgents: known,
      by: admin,
    });
    const to = async (role: string, threadId?: string, seeAll: string[] = ["admin"]) =>
      (await emailsOfRole({ db, role, ...(threadId ? { threadId } : {}), seeAll })).sort();

    expect(await to("supervisor", refund.id)).toEqual(["sup-refunds@x.test"]);
    expect(await to("supervisor", account.id)).toEqual(["sup-accounts@x.test"]);
    // An agent no team owns: every supervisor.
    expect(await to("supervisor", voucher.id)).toEqual([
      "sup-accounts@x.test",
      "sup-none@x.test",
      "sup-refunds@x.test",
    ]);
    // The admins see every team; with supervisors configured to, every supervisor does.
    expect(await to("admin", account.id)).toEqual(["u-admin@x.test"]);
    expect(await to("supervisor", account.id, ["supervisor", "admin"])).toEqual([
      "sup-accounts@x.test",
      "sup-none@x.test",
      "sup-refunds@x.test",
    ]);
    // Not about a thread: the whole role.
    expect(await to("supervisor")).toHaveLength(3);

    // An agent moves to the other team when it is assigned there; a deleted team's agents are no team's.
    await updateTeam({
      db,
      teamId: accounts.id,
      agents: ["account_change", "refund"],
      knownAgents: known,
      by: admin,
    });
    expect((await listTeams({ db })).map((t) => [t.name, t.agents])).toEqual([
      ["Accounts", ["account_change", "refund"]],
      ["Refunds", []],
    ]);
    expect(await to("supervisor", refund.id)).toEqual(["sup-accounts@x.test"]);
    await deleteTeam({ db, teamId: accounts.id, by: admin });
    expect(await to("supervisor", refund.id)).toHaveLength(3);
  });
});
