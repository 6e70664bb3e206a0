import { eq, sql } from "drizzle-orm";
import fc from "fast-check";
import pg from "pg";
import { createTestDatabase } from "@/e2e/support/pg";
import { migrateDatabase } from "./migrate";
import { type Database, openPostgres } from "./open";
import { MAX_PREPARED_PER_CONNECTION, statementName } from "./prepared-client";
import { threads } from "./schema";

/** The statements this pool's single connection holds prepared under our names. */
async function preparedOnConnection(database: Database): Promise<{ name: string; statement: string }[]> {
  return database.sql.query<{ name: string; statement: string }>(
    "SELECT name, statement FROM pg_prepared_statements WHERE name LIKE 'q\\_%'",
  );
}

describe("prepared statements on Postgres (every parameterized query parsed once per connection)", () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let database: Database;
  beforeAll(async () => {
    db = await createTestDatabase("prep");
    // One connection, so the catalogue read below sees the connection the queries ran on.
    database = openPostgres(db.url, { max: 1 });
    await migrateDatabase(database);
  });
  afterAll(async () => {
    await database.close();
    await db.drop();
  });

  it("prepares a Drizzle query under a name derived from its text, once, and reuses it", async () => {
    const query = () => database.db.select({ id: threads.id }).from(threads).where(eq(threads.id, "nope"));
    const { sql: text } = query().toSQL();
    for (let i = 0; i < 3; i++) expect(await query()).toEqual([]);
    const prepared = (await preparedOnConnection(database)).filter((p) => p.statement === text);
    expect(prepared).toEqual([{ name: statementName(text), statement: text }]);
  });

  it("leaves statements without parameters unnamed (BEGIN/COMMIT, migrations of several statements)", async () => {
    await database.db.transaction(async (tx) => {
      await tx.execute(sql`SELECT 1`);
    });
    const texts = (await preparedOnConnection(database)).map((p) => p.statement.toLowerCase());
    expect(texts.filter((t) => t === "begin" || t === "commit" || t === "select 1")).toEqual([]);
  });

  it("returns what an unnamed statement returns, for any parameters", async () => {
    const plain = new pg.Client({ connectionString: db.url });
    await plain.connect();
    try {
      const query = "SELECT $1::text AS text, $2::int AS n, $3::jsonb AS doc";
      await fc.assert(
        fc.asyncProperty(
          fc.string({ unit: "grapheme", maxLength: 40 }),
          fc.integer(),
          fc.jsonValue(),
          async (text, n, doc) => {
            const params = [text, n, JSON.stringify(doc)];
            const named = await database.sql.query(query, params);
            const unnamed = await plain.query(query, params);
            expect(named).toEqual(unnamed.rows);
            expect(named).toHaveLength(1);
          },
        ),
        { numRuns: 60 },
      );
      expect((await preparedOnConnection(database)).map((p) => p.statement)).toContain(query);
    } finally {
      await plain.end();
    }
  });

  it("keeps working when a migration adds a column under a running instance (a wildcard select stays unnamed)", async () => {
    const explicit = () => database.db.select({ id: threads.id }).from(threads).where(eq(threads.id, "x"));
    const wildcard = () => database.sql.query("SELECT t.* FROM threads t WHERE t.id = $1", ["x"]);
    await explicit();
    await wildcard();
    await database.sql.query("ALTER TABLE threads ADD COLUMN rolling_deploy_probe int");
    try {
      await expect(explicit()).resolves.toEqual([]);
      await expect(wildcard()).resolves.toEqual([]);
      const texts = (await preparedOnConnection(database)).map((p) => p.statement);
      expect(texts.filter((t) => t.includes("t.*"))).toEqual([]);
    } finally {
      await database.sql.query("ALTER TABLE threads DROP COLUMN rolling_deploy_probe");
    }
  });

  it(`keeps at most ${MAX_PREPARED_PER_CONNECTION} statements per connection; texts beyond it still run`, async () => {
    const extra = MAX_PREPARED_PER_CONNECTION + 40;
    for (let i = 0; i < extra; i++) {
      const [row] = await database.sql.query<{ v: number }>(`SELECT $1::int + ${i} AS v`, [1]);
      expect(row?.v).toBe(1 + i);
    }
    expect((await preparedOnConnection(database)).length).toBe(MAX_PREPARED_PER_CONNECTION);
  });
});
