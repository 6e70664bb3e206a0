import { jsonResponse } from "@/lib/contract/json-response";
import { checkHealth } from "@/lib/runtime/process/health";

export const dynamic = "force-dynamic";

/**
 * 200 when the database answers and the runtime's background work runs; 503 with `status` (degraded, draining) and a
 * `reason` otherwise (for load balancers and the e2e web server wait).
 */
export async function GET() {
  const result = await checkHealth();
  return jsonResponse(result, {
    status: result.ok ? 200 : 503,
    headers: { "cache-control": "no-store" },
  });
}
