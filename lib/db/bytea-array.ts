/**
 * Fast parser for Postgres `bytea[]` in text format (`{"\\x0a0b",NULL,"\\x"}`), for the `pg` driver. Its default
 * parser walks the array literal character by character and then decodes each element again: on a large state
 * (a long conversation), reading one checkpoint's values spent several milliseconds there. Hex-format elements
 * contain no quotes or commas, so each one is a slice.
 */
export function parseByteaArray(text: string | null): (Buffer | null)[] | null {
  if (text === null) return null;
  const out: (Buffer | null)[] = [];
  let i = 1; // after "{"
  const end = text.length - 1; // before "}"
  while (i < end) {
    if (text.startsWith("NULL", i)) {
      out.push(null);
      i += 4;
    } else if (text[i] === '"') {
      const close = text.indexOf('"', i + 1);
      // Inside quotes the leading backslash of "\x" is escaped: the element reads \\x<hex>.
      const start = text.startsWith("\\\\x", i + 1) ? i + 4 : i + 3;
      out.push(Buffer.from(text.slice(start, close), "hex"));
      i = close + 1;
    } else {
      // Unquoted element (not produced for hex bytea, kept for safety): \x<hex> up to the next comma.
      const comma = text.indexOf(",", i);
      const stop = comma < 0 ? end : comma;
      out.push(Buffer.from(text.slice(i + 2, stop), "hex"));
      i = stop;
    }
    if (text[i] === ",") i += 1;
  }
  return out;
}
