import { createHash } from "node:crypto";
import pg from "pg";

/** Distinct statements one connection keeps prepared; texts beyond it run unnamed (parsed and planned each time). */
export const MAX_PREPARED_PER_CONNECTION = 256;

/** A statement's prepared name: a hash of its text, so one name never stands for two texts. */
export function statementName(text: string): string {
  return `q_${createHash("sha1").update(text).digest("base64url")}`;
}

/**
 * A select-list wildcard (`SELECT *`, `t.*`, `RETURNING *`): such a statement's columns are fixed when it is
 * prepared, and after a migration adds a column Postgres refuses to run it again ("cached plan must not change result
 * type") on every connection that prepared it. A rolling deploy migrates under running instances, so these stay
 * unnamed. `count(*)` is not a wildcard.
 */
export const WILDCARD = /(^|[\s,.])\*(?=[\s,)]|$)/;

interface QueryConfigLike {
  text?: unknown;
  name?: unknown;
  values?: unknown;
}

/**
 * A `pg` client that prepares every parameterized statement once per connection: the first execution parses it
 * under a name derived from its text, later ones only bind and execute it, so Postgres skips parsing and analysing
 * the same Drizzle query on every call (and plans it once it has seen it a few times, as it does for any prepared
 * statement). Statements without parameters (BEGIN, COMMIT, migrations with several statements) stay on the simple
 * protocol, unnamed, and so do statements with a select-list wildcard (see {@link WILDCARD}). A connection keeps at most {@link MAX_PREPARED_PER_CONNECTION} statements prepared; a text
 * beyond that runs unnamed, so a query whose text varies (an IN list of changing length) cannot grow the backend
 * without bound.
 */
export class PreparingClient extends pg.Client {
  private readonly prepared = new Set<string>();

  // pg's query() has many overloads; this one only adds a name to a config object and passes everything on.
  override query(...args: unknown[]): never {
    const [config, values] = args as [QueryConfigLike | string, unknown];
    if (
      config &&
      typeof config === "object" &&
      typeof config.text === "string" &&
      config.name === undefined
    ) {
      const params = Array.isArray(values) ? values : config.values;
      if (Array.isArray(params) && params.length > 0 && !WILDCARD.test(config.text)) {
        const name = statementName(config.text);
        if (this.prepared.has(name) || this.prepared.size < MAX_PREPARED_PER_CONNECTION) {
          this.prepared.add(name);
          args[0] = { ...config, name };
        }
      }
    }
    return (pg.Client.prototype.query as (...a: unknown[]) => never).apply(this, args);
  }
}
