import type { NextConfig } from "next";
import { API_CONTENT_SECURITY_POLICY } from "./lib/platform/http/csp";
import { agentNpmPackages, writeAgentRegistry } from "./scripts/agents-registry.mjs";

// The agent packages agents.config.json lists: their registry is generated before anything is bundled.
writeAgentRegistry(process.cwd());

const nextConfig: NextConfig = {
  // Parallel builds (e.g. two e2e runs) each get their own output directory.
  distDir: process.env.NEXT_DIST_DIR || ".next",
  // PGlite ships WASM and pg has optional native bindings: load both from node_modules at run time.
  // OpenTelemetry's SDK (exporters, gRPC) and prom-client load from node_modules too: one copy per process.
  serverExternalPackages: [
    "@electric-sql/pglite",
    "pg",
    "@opentelemetry/sdk-node",
    "@opentelemetry/exporter-trace-otlp-http",
    "@opentelemetry/sdk-trace",
    "prom-client",
    // Stripe's SDK picks its Node build (node:http client, node:crypto) by export condition: load it as published.
    "stripe",
  ],
  // NEXT_BUILD_SKIP_TYPECHECK=1: `npm test` sets it after its own `tsc --noEmit` of the whole tree (no need to check
  // the same types twice); the careless-deploy test sets it for a tree whose tests no longer compile on purpose.
  typescript: { ignoreBuildErrors: process.env.NEXT_BUILD_SKIP_TYPECHECK === "1" },
  // An agent package installed from npm may ship TypeScript (a path in the config is compiled as the app is).
  transpilePackages: agentNpmPackages(process.cwd()),
  allowedDevOrigins: ["127.0.0.1"],
  poweredByHeader: false,
  async headers() {
    // Pages get a per-request nonce CSP from proxy.ts; API responses are data and may not load or frame anything.
    const common = [
      { key: "X-Content-Type-Options", value: "nosniff" },
      { key: "X-Frame-Options", value: "DENY" },
      { key: "Referrer-Policy", value: "same-origin" },
      { key: "Permissions-Policy", value: "camera=(), microphone=(), geolocation=()" },
    ];
    return [
      { source: "/:path*", headers: common },
      {
        source: "/api/:path*",
        headers: [{ key: "Content-Security-Policy", value: API_CONTENT_SECURITY_POLICY }],
      },
    ];
  },
};

export default nextConfig;
