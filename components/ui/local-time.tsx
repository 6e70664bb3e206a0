"use client";

import { useSyncExternalStore } from "react";
import { formatTime } from "@/lib/contract/format";

const subscribe = () => () => {};

/**
 * A timestamp in the viewer's time zone. The server does not know that zone, so the server render (and hydration)
 * shows UTC and the browser switches to local time right after: no hydration mismatch, no wrong zone.
 */
export function LocalTime({ iso, dateOnly = false }: { iso: string; dateOnly?: boolean }) {
  const hydrated = useSyncExternalStore(
    subscribe,
    () => true,
    () => false,
  );
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return <span>{iso}</span>;
  const options: Intl.DateTimeFormatOptions = dateOnly
    ? { dateStyle: "medium" }
    : { dateStyle: "medium", timeStyle: "medium" };
  const text = hydrated
    ? dateOnly
      ? date.toLocaleDateString("en-GB", options)
      : formatTime(iso)
    : `${date.toLocaleString("en-GB", { ...options, timeZone: "UTC" })} UTC`;
  return <time dateTime={iso}>{text}</time>;
}
