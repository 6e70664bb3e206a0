import { formatAge } from "@/lib/contract/format";

/** "45 s", "12 min", … for an age in milliseconds (formatAge counts from an instant; count from the epoch). */
export function ageText(ms: number): string {
  return formatAge(new Date(0).toISOString(), Math.max(0, ms));
}
