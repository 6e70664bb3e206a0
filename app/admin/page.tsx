import type { Metadata } from "next";
import Link from "next/link";
import { AdminConsole } from "@/components/admin/admin-console";
import { RetentionPanel } from "@/components/admin/retention-panel";
import { ShadowPanel } from "@/components/admin/shadow-panel";
import { TeamsPanel } from "@/components/admin/teams-panel";
import { QueueSettings } from "@/components/queue/queue-settings";
import { listApiKeys } from "@/lib/auth/api-keys";
import { answeringPage, requirePageUser } from "@/lib/auth/page";
import { listUsers } from "@/lib/auth/users";
import { getDatabase } from "@/lib/db/client";
import { env } from "@/lib/platform/env";
import { readNotificationTargets } from "@/lib/queue/settings/notification-targets";
import { readSlaPolicies } from "@/lib/queue/settings/sla-policies";
import { readTeams } from "@/lib/queue/settings/teams";
import { defaultRetentionPolicy } from "@/lib/runtime/retention/retention-policy";
import { readLastShadowReport } from "@/lib/runtime/views/shadow-report";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Admin" };

/** Users and intake keys, retention and erasure (admins only). */
async function AdminPage() {
  const me = await requirePageUser("/admin", "admin");
  const { db } = await getDatabase();
  const [users, keys, policies, targets, teamsAndAgents, shadow] = await Promise.all([
    listUsers({ db }),
    listApiKeys({ db }),
    readSlaPolicies({ db }),
    readNotificationTargets({ db }),
    readTeams({ db }),
    readLastShadowReport({ db }),
  ]);
  const policy = defaultRetentionPolicy();
  return (
    <div className="space-y-5">
      <div>
        <h1 className="text-2xl font-semibold">Admin</h1>
        <p className="mt-1 text-sm text-slate-700">
          Who may use the console, with which role, and which systems may file tickets. Every change is in the{" "}
          <Link href="/audit" className="underline underline-offset-2">
            audit trail
          </Link>
          .
        </p>
      </div>
      <AdminConsole
        me={me.email}
        users={users}
        keys={keys.map((k) => ({
          id: k.id,
          name: k.name,
          prefix: k.prefix,
          createdAt: k.createdAt.toISOString(),
          lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
          revokedAt: k.revokedAt?.toISOString() ?? null,
        }))}
      />
      <TeamsPanel
        teams={teamsAndAgents.teams}
        users={users.filter((u) => !u.disabled).map((u) => ({ id: u.id, email: u.email, role: u.role }))}
        agents={teamsAndAgents.agents}
        seeAllRole={env.TEAMS_SEE_ALL_ROLE}
      />
      <RetentionPanel
        policy={{
          keepCheckpoints: policy.keepCheckpoints,
          truncateAfterHours: policy.truncateAfterMs / 3_600_000,
          compactAfterMinutes: policy.compactAfterMs / 60_000,
          archiveAfterDays: policy.archiveAfterMs === null ? null : policy.archiveAfterMs / 86_400_000,
          archiveDir: policy.archiveDir,
        }}
      />
      <QueueSettings policies={policies} targets={targets} />
      <ShadowPanel report={shadow} />
    </div>
  );
}

export default answeringPage(AdminPage);
