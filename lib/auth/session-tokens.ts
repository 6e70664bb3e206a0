import "server-only";

type Json = Record<string, unknown>;

function strip(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(strip);
  if (!value || typeof value !== "object") return value;
  const { token: _token, ...rest } = value as Json;
  if (rest.session && typeof rest.session === "object") rest.session = strip(rest.session);
  return rest;
}

/**
 * The session lives in an httpOnly cookie; better-auth also puts its token in JSON bodies (sign-in, get-session,
 * list-sessions), where any script on the page could read it. Drop `token` from the body, from its `session`, and
 * from each element of a list. Non-JSON and error responses pass unchanged.
 */
export async function withoutSessionTokens(response: Response): Promise<Response> {
  if (!response.ok || !response.headers.get("content-type")?.includes("application/json")) return response;
  const text = await response.text();
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  let body: string;
  try {
    body = JSON.stringify(strip(JSON.parse(text)));
  } catch {
    body = text;
  }
  return new Response(body, { status: response.status, statusText: response.statusText, headers });
}
