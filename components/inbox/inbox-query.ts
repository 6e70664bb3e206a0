/*
 * The inbox's view of the world as URL parameters — the same names and units as `GET /api/threads`, so the page URL,
 * the API call and a bookmark all say the same thing. Isomorphic: the server page reads them, the client writes them.
 */

/**
 * The parameters that narrow the queue of pending decisions (not the listing, not the page size): an inbox view. A
 * thread opened from the view carries them (see {@link queueSearch}).
 */
export const QUEUE_PARAM_NAMES = [
  "action",
  "minAmount",
  "maxAmount",
  "olderThan",
  "assigned",
  "escalated",
  "version",
] as const;

export const INBOX_PARAM_NAMES = ["status", ...QUEUE_PARAM_NAMES, "limit"] as const;
export type InboxParamName = (typeof INBOX_PARAM_NAMES)[number];
/** Known inbox parameters, as strings (amounts in cents, `olderThan` like `15m`). */
export type InboxParams = Partial<Record<InboxParamName, string>>;

export const DEFAULT_PAGE_SIZE = "25";
export const PAGE_SIZES = ["10", "25", "50"] as const;

/** Minimum-age choices of the filter (`olderThan`). */
export const AGE_CHOICES = [
  { value: "1m", label: "Older than 1 minute" },
  { value: "15m", label: "Older than 15 minutes" },
  { value: "1h", label: "Older than 1 hour" },
  { value: "1d", label: "Older than 1 day" },
] as const;

/** The known, non-empty parameters of a Next.js `searchParams` object (first value of repeated ones). */
export function pickInboxParams(raw: Record<string, string | string[] | undefined>): InboxParams {
  const params: InboxParams = {};
  for (const name of INBOX_PARAM_NAMES) {
    const value = raw[name];
    const first = Array.isArray(value) ? value[0] : value;
    if (first !== undefined && first.trim() !== "") params[name] = first.trim();
  }
  return params;
}

/** Whether the params list pending decisions (the default) rather than threads. */
export function isPendingView(params: InboxParams): boolean {
  return params.status === undefined || params.status === "pending";
}

/** Whether any decision filter is set (for the empty state). */
export function hasFilters(params: InboxParams): boolean {
  return QUEUE_PARAM_NAMES.some((name) => Boolean(params[name]));
}

/** A query string (no `?`) for the page URL, or for the API when `cursor` is given. */
export function inboxSearch(params: InboxParams, cursor?: string | null): string {
  const search = new URLSearchParams();
  for (const name of INBOX_PARAM_NAMES) {
    const value = params[name];
    if (value !== undefined && value !== "") search.set(name, value);
  }
  if (cursor) search.set("cursor", cursor);
  return search.toString();
}

/** "249.5" (euros, as typed) → "24950" (cents); "" → undefined; null when it is not an amount. */
export function eurosToCents(text: string): string | undefined | null {
  const trimmed = text.trim().replace(",", ".");
  if (trimmed === "") return undefined;
  if (!/^\d{1,10}(\.\d{1,2})?$/.test(trimmed)) return null;
  return String(Math.round(Number(trimmed) * 100));
}

/** "24950" (cents) → "249.50"; undefined → "". */
export function centsToEuros(cents: string | undefined): string {
  if (cents === undefined || !/^\d+$/.test(cents)) return "";
  const n = Number(cents);
  return n % 100 === 0 ? String(n / 100) : (n / 100).toFixed(2);
}

/**
 * The queue view of `params` as a query string with its `?` ("" when it is the whole queue): a thread opened from a
 * filtered inbox carries it, so the thread page's next / previous (`n` / `p`) walk that view, not the whole queue.
 */
export function queueSearch(params: InboxParams): string {
  const search = new URLSearchParams();
  if (!isPendingView(params)) return "";
  for (const name of QUEUE_PARAM_NAMES) {
    const value = params[name];
    if (value !== undefined && value !== "") search.set(name, value);
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

/** A thread's page, in the queue view whose query string `search` is (see {@link queueSearch}; "" for none). */
export function threadHref(threadId: string, search = ""): string {
  return `/threads/${encodeURIComponent(threadId)}${search}`;
}
