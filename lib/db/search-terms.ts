import "server-only";
import { blindIndex } from "@/lib/platform/data-keys";

/*
 * The words of a sealed ticket as a blind index (issue 49: search that still works): each word of the title and the
 * message, lower case, as the search box splits a query (letters and digits), and each of its prefixes from two
 * characters (one, for a one-letter word) up to {@link PREFIX_MAX}, become a keyed digest under the index key. A
 * query's word is looked up as the digest of itself, cut to {@link PREFIX_MAX}: "gizm" finds "gizmo" as a prefix
 * search on words in clear does. The digests say nothing without the index key; erasure deletes a subject's rows.
 */

/** A word's prefixes are indexed up to this many characters: a longer query word matches by its first ones. */
export const PREFIX_MAX = 20;
/** At most this many distinct words of a ticket are indexed (the rest of a very long message is not searchable). */
export const WORDS_MAX = 400;
/** How many words of a query are looked up (as the search box's word query). */
export const QUERY_WORDS_MAX = 8;

const WORD = /[\p{L}\p{N}]+/gu;

function digest(prefix: string): string {
  return blindIndex("term", prefix).slice(0, 20);
}

/** Words of `text`, lower case, split as the search box splits a query. */
export function wordsOf(text: string): string[] {
  return text.toLowerCase().match(WORD) ?? [];
}

/** The digests a ticket's words are found by (distinct, in no meaningful order). */
export function ticketTerms(...texts: readonly string[]): string[] {
  const words = new Set<string>();
  for (const text of texts) {
    for (const word of wordsOf(text)) {
      if (words.size >= WORDS_MAX) break;
      words.add(word);
    }
  }
  const prefixes = new Set<string>();
  for (const word of words) {
    const chars = [...word];
    for (let n = Math.min(2, chars.length); n <= Math.min(PREFIX_MAX, chars.length); n++) {
      prefixes.add(chars.slice(0, n).join(""));
    }
  }
  return [...prefixes].map(digest);
}

/** The digests a query's words are looked up by (every one must match), or null when it has no words. */
export function queryTerms(q: string): string[] | null {
  const words = wordsOf(q).slice(0, QUERY_WORDS_MAX);
  if (words.length === 0) return null;
  return [...new Set(words.map((w) => [...w].slice(0, PREFIX_MAX).join("")))].map(digest);
}
