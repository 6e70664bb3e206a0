import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "postgresql",
  schema: ["./lib/db/schema/index.ts", "./lib/shop/schema.ts"],
  out: "./drizzle",
});
