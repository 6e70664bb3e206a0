import { checkDatabase } from "@/lib/db/health";

export const dynamic = "force-dynamic";

/** 200 when the database answers, 503 otherwise (for load balancers and the e2e web server wait). */
export async function GET() {
  const result = await checkDatabase();
  return Response.json(result, {
    status: result.ok ? 200 : 503,
    headers: { "cache-control": "no-store" },
  });
}
