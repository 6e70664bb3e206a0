import { route } from "@/lib/http/route";
import { authorizeMetrics, scrape } from "@/lib/runtime/views/scrape";

export const dynamic = "force-dynamic";

/**
 * Prometheus metrics of this instance (text exposition format): `Authorization: Bearer <METRICS_TOKEN>` or an admin
 * session, checked first (the wrapper's own gates know only sessions and intake keys). Takes no parameters.
 * The series and their labels are listed in the README ("Observability").
 */
export const GET = route({ name: "GET /api/metrics", access: "public" }, async ({ request, database }) => {
  await authorizeMetrics({ db: database.db, request });
  const { body, contentType } = await scrape(database.db);
  return new Response(body, { headers: { "content-type": contentType, "cache-control": "no-store" } });
});
