import { AppError, appErrorOf } from "@/lib/contract/errors";
import { operatorSentence } from "@/lib/contract/operator-messages";

/**
 * Fetch JSON from our API. A non-2xx answer throws the server's AppError (rebuilt from its code), a network failure
 * an `unavailable:network` AppError, so callers show one kind of message.
 */
export async function fetchJson<T>(url: string, init?: RequestInit): Promise<T> {
  let res: Response;
  try {
    res = await fetch(url, { cache: "no-store", ...init });
  } catch (error) {
    if (error instanceof DOMException && error.name === "AbortError") throw error;
    throw new AppError("unavailable:network", "The server cannot be reached. Check your connection.");
  }
  const body: unknown = await res.json().catch(() => null);
  if (!res.ok) throw AppError.fromBody(body, res.status);
  return body as T;
}

/** POST a JSON body; see {@link fetchJson}. */
export function postJson<T>(url: string, body: unknown, init?: RequestInit): Promise<T> {
  return fetchJson<T>(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    ...init,
  });
}

/** A message for an error caught from {@link fetchJson}, in the operator's words (`lib/contract/operator-messages.ts`). */
export function errorMessage(error: unknown): string {
  const known = appErrorOf(error);
  return known ? operatorSentence(known) : "Something went wrong. Try again.";
}
