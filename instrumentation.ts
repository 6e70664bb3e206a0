/**
 * Runs once per server process before the first request (not during `next build`): open the database and apply
 * pending migrations, so a fresh checkout serves a working console on the first page load. The boot itself is
 * Node-only (lib/server-boot.ts), imported only on Node so the Edge compile never sees it.
 */
export async function register() {
  if (process.env.NEXT_RUNTIME === "nodejs") {
    const { boot } = await import("@/lib/server-boot");
    await boot();
  }
}
