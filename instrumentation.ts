/**
 * Runs once per server process before the first request (not during `next build`): open the database and apply
 * pending migrations, so a fresh checkout serves a working console on the first page load.
 */
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  let start: () => Promise<void>;
  try {
    // Before anything that makes spans or logs: the tracer provider and its async context (exports only with OTLP set).
    const { startTelemetry } = await import("@/lib/platform/observability/otel");
    startTelemetry();
    // First thing: requests are stamped with their socket's address from here on (sign-in limits).
    const { installPeerStamp } = await import("@/lib/platform/net/peer-stamp");
    installPeerStamp();
    ({ startServer: start } = await import("@/lib/server-start"));
  } catch (error) {
    // A bad setting (`Invalid environment: …`, read when the server's modules load): say it and stop, with the
    // configuration exit code. Next.js would otherwise keep the process up, answering nothing.
    const message = (error as { message?: unknown } | null)?.message;
    console.error(`start: refused — ${typeof message === "string" ? message : String(error)}`);
    process.exit(78);
  }
  await start();
}
