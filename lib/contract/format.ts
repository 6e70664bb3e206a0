/** A short age such as "45 s", "12 min", "3 h", "2 d". */
export function formatAge(fromIso: string, now: number = Date.now()): string {
  const seconds = Math.max(0, Math.round((now - Date.parse(fromIso)) / 1000));
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  if (seconds < 86_400) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86_400)} d`;
}

/** A duration such as "2 s", "15 min", "1 d" (the same steps as {@link formatAge}). */
export function formatDuration(ms: number): string {
  return formatAge(new Date(0).toISOString(), ms);
}

/** A timestamp for people: "30 Nov 2026, 08:31:05" in the viewer's locale and zone. */
export function formatTime(iso: string): string {
  return new Date(iso).toLocaleString("en-GB", { dateStyle: "medium", timeStyle: "medium" });
}
