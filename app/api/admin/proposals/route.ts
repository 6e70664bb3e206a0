import { json, route } from "@/lib/http/route";
import { readProposals } from "@/lib/queue/settings/proposals";

export const dynamic = "force-dynamic";

/** Configuration changes waiting for a second admin (admins only). */
export const GET = route(
  { name: "GET /api/admin/proposals", access: "admin" },
  async ({ database: { db } }) => json(await readProposals({ db })),
);
