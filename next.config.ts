import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // Parallel builds (e.g. two e2e runs) each get their own output directory.
  distDir: process.env.NEXT_DIST_DIR || ".next",
  // PGlite ships WASM and pg has optional native bindings: load both from node_modules at run time.
  serverExternalPackages: ["@electric-sql/pglite", "pg"],
  allowedDevOrigins: ["127.0.0.1"],
  poweredByHeader: false,
};

export default nextConfig;
