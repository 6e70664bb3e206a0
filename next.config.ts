import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // PGlite ships WASM and pg has optional native bindings: load both from node_modules at run time.
  serverExternalPackages: ["@electric-sql/pglite", "pg"],
  allowedDevOrigins: ["127.0.0.1"],
  poweredByHeader: false,
};

export default nextConfig;
