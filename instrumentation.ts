/**
 * Runs once per server process before the first request (not during `next build`): open the database and apply
 * pending migrations, so a fresh checkout serves a working console on the first page load.
 */
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  // Before anything that makes spans or logs: the tracer provider and its async context (exports only with OTLP set).
  const { startTelemetry } = await import("@/lib/observability/otel");
  startTelemetry();
  // First thing: requests are stamped with their socket's address from here on (sign-in limits).
  const { installPeerStamp } = await import("@/lib/net/peer-stamp");
  installPeerStamp();
  const { startServer } = await import("@/lib/server-start");
  await startServer();
}
