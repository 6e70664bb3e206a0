/**
 * Runs once per server process before the first request (not during `next build`): open the database and apply
 * pending migrations, so a fresh checkout serves a working console on the first page load.
 */
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { startServer } = await import("@/lib/server-start");
  await startServer();
}
