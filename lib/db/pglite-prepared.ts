import "server-only";
import type { PGlite, Transaction } from "@electric-sql/pglite";
import type { Gate } from "./pglite-gate";
import { WILDCARD } from "./prepared-client";

/*
 * Prepared statements for embedded PGlite. `PGlite.query` runs six protocol steps per statement (parse, describe the
 * statement, bind, describe the portal, execute, sync), each a separate call into the WASM module and a separate
 * parse of its answer, and Postgres parses, analyses and plans the text every time. Here a parameterized statement is
 * parsed and described once (named `hq<n>`), and every later run is ONE call: bind + execute + sync, with the plan
 * cached by Postgres. Values are serialized and results parsed with PGlite's own codecs, so answers are the same.
 *
 * The same mutual exclusion as `PGlite.query`: outside a transaction, the transaction lock and then the query lock
 * (so a statement never lands inside another caller's open transaction); inside one, the query lock. In front of
 * both, the gate (pglite-gate.ts) bounds every wait for the connection. Statements
 * without parameters (DDL, migrations, BEGIN/COMMIT) and wildcard selects (their result type follows the table)
 * keep PGlite's own path.
 */

type Parser = (value: string, typeId: number) => unknown;
type Serializer = (value: unknown) => string | Uint8Array;

interface QueryOptions {
  rowMode?: "array" | "object";
  parsers?: Record<number, Parser>;
  serializers?: Record<number, Serializer>;
}

interface Field {
  name: string;
  dataTypeID: number;
}

interface Statement {
  name: string;
  paramTypes: number[];
  fields: Field[];
}

interface Message {
  name: string;
  fields?: unknown[];
  dataTypeIDs?: number[];
  text?: string;
}

interface Internals {
  _runExclusiveTransaction?: <T>(fn: () => Promise<T>) => Promise<T>;
  parsers?: Record<number, Parser>;
  serializers?: Record<number, Serializer>;
}

/** Named statements per database; past this, new texts take PGlite's own path. */
const MAX_STATEMENTS = 512;

const encoder = new TextEncoder();

function frame(type: string, parts: Uint8Array[]): Uint8Array {
  const length = 4 + parts.reduce((n, p) => n + p.length, 0);
  const out = new Uint8Array(1 + length);
  out[0] = type.charCodeAt(0);
  new DataView(out.buffer).setInt32(1, length);
  let at = 5;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const cstring = (s: string) => {
  const bytes = encoder.encode(s);
  const out = new Uint8Array(bytes.length + 1);
  out.set(bytes);
  return out;
};

function int(n: number, bytes: 2 | 4): Uint8Array {
  const out = new Uint8Array(bytes);
  if (bytes === 2) new DataView(out.buffer).setInt16(0, n);
  else new DataView(out.buffer).setInt32(0, n);
  return out;
}

const SYNC = new Uint8Array([0x53, 0, 0, 0, 4]);
const EXECUTE = frame("E", [cstring(""), int(0, 4)]);

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Bind the unnamed portal to statement `name`: binary for byte values, text otherwise; results in text. */
function bind(name: string, values: (string | Uint8Array | null)[]): Uint8Array {
  const parts: Uint8Array[] = [cstring(""), cstring(name), int(values.length, 2)];
  for (const v of values) parts.push(int(v instanceof Uint8Array ? 1 : 0, 2));
  parts.push(int(values.length, 2));
  for (const v of values) {
    if (v === null) {
      parts.push(int(-1, 4));
      continue;
    }
    const bytes = typeof v === "string" ? encoder.encode(v) : v;
    parts.push(int(bytes.length, 4), bytes);
  }
  parts.push(int(0, 2));
  return frame("B", parts);
}

export interface PreparedPglite {
  /** `PGlite.query`'s contract, prepared. */
  query<T>(text: string, params?: unknown[], options?: QueryOptions): Promise<{ rows: T[] }>;
  /** A client for Drizzle: `query` prepared, transactions through PGlite with their statements prepared too. */
  client: PGlite;
  /** Statements prepared so far (for tests). */
  readonly prepared: number;
}

/**
 * Prepared statements over `client`, or null when this PGlite lacks what they rely on (then use `gatedPglite`).
 * Every statement and transaction outside a transaction passes `gate`.
 */
export function preparedPglite(client: PGlite, gate: Gate): PreparedPglite | null {
  const internals = client as unknown as Internals;
  const exclusive = internals._runExclusiveTransaction;
  if (typeof exclusive !== "function" || !internals.parsers || !internals.serializers) return null;
  const lockTransaction = <T>(fn: () => Promise<T>): Promise<T> => exclusive.call(client, fn) as Promise<T>;
  const parsers = internals.parsers;
  const serializers = internals.serializers;
  const statements = new Map<string, Statement>();
  let counter = 0;

  async function prepare(text: string): Promise<Statement> {
    counter += 1;
    const name = `hq${counter}`;
    const { messages } = await client.execProtocol(
      concat([
        frame("P", [cstring(name), cstring(text), int(0, 2)]),
        frame("D", [new Uint8Array([0x53]), cstring(name)]),
        SYNC,
      ]),
      { syncToFs: false },
    );
    const params = (messages as Message[]).find((m) => m.name === "parameterDescription");
    const row = (messages as Message[]).find((m) => m.name === "rowDescription");
    const statement: Statement = {
      name,
      paramTypes: params?.dataTypeIDs ?? [],
      fields: ((row?.fields ?? []) as Field[]).map((f) => ({ name: f.name, dataTypeID: f.dataTypeID })),
    };
    statements.set(text, statement);
    return statement;
  }

  async function run(text: string, params: unknown[], options: QueryOptions | undefined, syncToFs: boolean) {
    const statement = statements.get(text) ?? (await prepare(text));
    const values = params.map((value, i) => {
      if (value === null || value === undefined) return null;
      const type = statement.paramTypes[i] as number;
      const serialize = options?.serializers?.[type] ?? serializers[type];
      return serialize ? serialize(value) : String(value);
    });
    const { messages } = await client.execProtocol(concat([bind(statement.name, values), EXECUTE, SYNC]), {
      syncToFs,
    });
    const fields = statement.fields;
    const parserOf = fields.map((f) => options?.parsers?.[f.dataTypeID] ?? parsers[f.dataTypeID]);
    const rows: unknown[] = [];
    let affectedRows = 0;
    let rowCount: number | undefined;
    for (const m of messages as Message[]) {
      if (m.name === "dataRow") {
        const cells = (m.fields as (string | null)[]).map((v, i) => {
          if (v === null) return null;
          const parse = parserOf[i];
          return parse ? parse(v, fields[i]?.dataTypeID as number) : v;
        });
        rows.push(
          options?.rowMode === "array"
            ? cells
            : Object.fromEntries(cells.map((v, i) => [fields[i]?.name as string, v])),
        );
      } else if (m.name === "commandComplete") {
        const words = (m.text ?? "").split(" ");
        const n = Number.parseInt(words[words.length - 1] ?? "", 10);
        if (!Number.isNaN(n)) rowCount = n;
        if (["INSERT", "UPDATE", "DELETE", "COPY", "MERGE"].includes(words[0] ?? "")) affectedRows += n || 0;
      }
    }
    return { rows, fields, affectedRows, ...(rowCount === undefined ? {} : { rowCount }) };
  }

  const preparable = (text: string, params: unknown[] | undefined) =>
    !!params &&
    params.length > 0 &&
    !WILDCARD.test(text) &&
    !client.closed &&
    (statements.has(text) || statements.size < MAX_STATEMENTS);

  async function query<T>(text: string, params?: unknown[], options?: QueryOptions) {
    if (!preparable(text, params))
      return gate.exclusive(() => client.query<T>(text, params, options as never));
    return (await gate.exclusive(() =>
      lockTransaction(() => client.runExclusive(() => run(text, params as unknown[], options, true))),
    )) as { rows: T[] };
  }

  function inTransaction(tx: Transaction): Transaction {
    return {
      async query<T>(text: string, params?: unknown[], options?: QueryOptions) {
        if (tx.closed || !preparable(text, params)) return tx.query<T>(text, params, options as never);
        return (await client.runExclusive(() => run(text, params as unknown[], options, false))) as never;
      },
      sql: tx.sql,
      exec: tx.exec,
      rollback: tx.rollback,
      listen: tx.listen,
      get closed() {
        return tx.closed;
      },
    } as Transaction;
  }

  const drizzleClient = {
    query,
    transaction: <T>(callback: (tx: Transaction) => Promise<T>) =>
      gate.exclusive(() =>
        client.transaction((tx) => gate.insideTransaction(() => callback(inTransaction(tx)))),
      ),
    exec: (text: string) => gate.exclusive(() => client.exec(text)),
    listen: client.listen.bind(client),
    close: client.close.bind(client),
  } as unknown as PGlite;

  return {
    query: query as PreparedPglite["query"],
    client: drizzleClient,
    get prepared() {
      return statements.size;
    },
  };
}

/** PGlite as is, behind the gate: for a PGlite version without what prepared statements rely on. */
export function gatedPglite(client: PGlite, gate: Gate): PGlite {
  return {
    query: <T>(text: string, params?: unknown[], options?: QueryOptions) =>
      gate.exclusive(() => client.query<T>(text, params, options as never)),
    transaction: <T>(callback: (tx: Transaction) => Promise<T>) =>
      gate.exclusive(() => client.transaction((tx) => gate.insideTransaction(() => callback(tx)))),
    exec: (text: string) => gate.exclusive(() => client.exec(text)),
    listen: client.listen.bind(client),
    close: client.close.bind(client),
  } as unknown as PGlite;
}
