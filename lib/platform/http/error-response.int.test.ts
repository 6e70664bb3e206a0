import { Writable } from "node:stream";
import fc from "fast-check";
import pg from "pg";
import { createTestDatabase } from "@/e2e/support/pg";
import { AppError } from "../../contract/errors";
import { createLogger } from "../observability/logger";
import { clearSingleton, setSingleton } from "../singleton";
import { errorResponse } from "./error-response";

/** What the server's logger wrote, one parsed JSON object per line; and what else reached stderr. */
function captureServerLog() {
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n").filter(Boolean)) {
        raw.push(line);
        lines.push(JSON.parse(line));
      }
      done();
    },
  });
  const stderr: string[] = [];
  const restore = [
    vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => void stderr.push(args.join(" "))),
    vi.spyOn(console, "warn").mockImplementation((...args: unknown[]) => void stderr.push(args.join(" "))),
  ];
  // The process's logger (`logger()`), replaced by one that writes here.
  setSingleton("logger", createLogger(stream, "info"));
  return {
    lines,
    raw,
    stderr,
    reset() {
      lines.length = 0;
      raw.length = 0;
      stderr.length = 0;
    },
    stop() {
      for (const spy of restore) spy.mockRestore();
      clearSingleton("logger");
    },
  };
}

/**
 * An error a route handler did not expect reaches the server log as one structured line, with what a developer
 * needs (where, the database's code, the stack) and without what the database quoted from the refused row.
 */
describe("errorResponse and the server log", () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let client: pg.Client;
  let log: ReturnType<typeof captureServerLog>;

  beforeAll(async () => {
    db = await createTestDatabase("errlog");
    client = new pg.Client({ connectionString: db.url });
    await client.connect();
    await client.query("CREATE TABLE customers (email text PRIMARY KEY, note text NOT NULL)");
    log = captureServerLog();
  });
  afterAll(async () => {
    log?.stop();
    await client?.end();
    await db?.drop();
  });

  it("logs a real database error with its code and stack, never the row the database quoted", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.emailAddress(),
        fc.string({ minLength: 1, maxLength: 40 }).filter((s) => !s.includes("\u0000")),
        async (email, note) => {
          log.reset();
          await client.query("DELETE FROM customers");
          await client.query("INSERT INTO customers VALUES ($1, $2)", [email, note]);
          const thrown = await client.query("INSERT INTO customers VALUES ($1, $2)", [email, note]).then(
            () => undefined,
            (e: unknown) => e,
          );
          // The real driver's error carries the refused key in `detail`.
          expect(thrown).toBeInstanceOf(pg.DatabaseError);
          expect((thrown as pg.DatabaseError).detail).toContain(email);

          const response = errorResponse(thrown, "customers.create");
          expect(response.status).toBe(500);
          const body = await response.json();
          expect(body).toEqual({
            code: "internal:unexpected",
            message: "Something went wrong on the server. The error was logged.",
          });

          expect(log.stderr).toEqual([]);
          expect(log.lines).toHaveLength(1);
          expect(log.lines[0]).toMatchObject({
            level: "error",
            msg: "unexpected error",
            context: "customers.create",
            error: { name: "error", code: "23505", message: expect.stringContaining("customers_pkey") },
          });
          const logged = log.lines[0]?.error as { stack?: unknown } | undefined;
          expect(String(logged?.stack)).toContain("customers_pkey");
          expect(log.raw[0]).not.toContain(email);
          expect(JSON.stringify(body)).not.toContain(email);
        },
      ),
      { numRuns: 25 },
    );
  });

  it("logs nothing for an AppError: it is the answer, not a fault", async () => {
    log.reset();
    const response = errorResponse(new AppError("not_found:thread", "No such thread."), "threads.get");
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ code: "not_found:thread", message: "No such thread." });
    expect(log.lines).toEqual([]);
    expect(log.stderr).toEqual([]);
  });
});
