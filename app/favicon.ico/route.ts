import { readFile } from "node:fs/promises";
import { join } from "node:path";

export const dynamic = "force-static";

/**
 * `/favicon.ico`, which browsers and tools ask for whatever the page declares: the console's icon (app/icon.svg), so
 * the request log shows no 404 for it.
 */
export async function GET(): Promise<Response> {
  const svg = await readFile(join(process.cwd(), "app", "icon.svg"));
  return new Response(svg, {
    headers: { "content-type": "image/svg+xml", "cache-control": "public, max-age=86400" },
  });
}
