/**
 * Where a page goes when the database does not answer (`requirePageUser`): a 503 that says so in an operator's words,
 * with `Retry-After`, and goes back to the page it came from by itself once it is worth trying again. A route handler,
 * not a page: a page cannot answer 503, and this one must not need the database.
 */
export function GET(request: Request): Response {
  const next = new URL(request.url).searchParams.get("next") ?? "/";
  // Only a path of this site (never `//host` or a scheme): the page goes back where it was, nowhere else.
  const back = next.startsWith("/") && !next.startsWith("//") && !next.includes("\\") ? next : "/";
  const href = escapeHtml(back);
  return new Response(
    `<!doctype html><html lang="en"><meta charset="utf-8"><meta http-equiv="refresh" content="5; url=${href}">` +
      "<title>The database is not answering</title>" +
      '<main style="font-family:system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem">' +
      "<h1>The database is not answering</h1>" +
      "<p>It may be restarting or failing over. Nothing you did was lost: decisions you sent before are kept, and " +
      "agents continue where they stopped once it is back.</p>" +
      `<p>This page tries again in 5 seconds, or <a href="${href}">try again now</a>.</p></main></html>`,
    {
      status: 503,
      headers: {
        "content-type": "text/html; charset=utf-8",
        "cache-control": "no-store",
        "retry-after": "5",
      },
    },
  );
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
