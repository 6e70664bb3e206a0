/**
 * The Node.js server's boot, imported by instrumentation.ts only when it runs on Node (never compiled for the Edge
 * runtime, where `process.exit` does not exist: keeping it out of instrumentation.ts keeps the build quiet).
 */
export async function boot(): Promise<void> {
  // Output whose reader is gone (`npm start | cat` after Ctrl-C ended the `cat`) fails with EPIPE: the lines are lost,
  // and nothing else may stop because of it — least of all the shutdown that is writing them.
  for (const stream of [process.stdout, process.stderr]) stream.on("error", () => {});
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
