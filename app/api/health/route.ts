import { jsonResponse } from "@/lib/contract/json-response";
import { checkHealth } from "@/lib/runtime/process/health";

export const dynamic = "force-dynamic";

/**
 * 200 when the database answers and the runtime's background work runs; 503 with `status` (degraded, draining) and a
 * `reason` otherwise (for load balancers and the e2e web server wait). `?probe=ready` (readiness) is also 503 while
 * threads wait on an agent version this server refused: a rollout stops there.
 */
export async function GET(request: Request) {
  const probe = new URL(request.url).searchParams.get("probe") === "ready" ? "ready" : "live";
  const result = await checkHealth({ probe });
  return jsonResponse(result, {
    status: result.ok ? 200 : 503,
    headers: { "cache-control": "no-store" },
  });
}
