import { DrizzleQueryError } from "drizzle-orm/errors";
import { captureLog } from "@/e2e/support/log-capture";
import { errorFields, runFields } from "./logger";
import { boundedLabel } from "./metrics";

const capture = captureLog;

describe("the server log", () => {
  it("writes one JSON object per line with the level as a word, the time and the run's ids", () => {
    const { log, lines } = capture();
    log.info({ ...runFields({ id: "run-1", threadId: "thread-1", traceId: "a".repeat(32) }) }, "run started");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: "info",
      msg: "run started",
      runId: "run-1",
      threadId: "thread-1",
      traceId: "a".repeat(32),
    });
    expect(typeof lines[0]?.time).toBe("string");
  });

  it("logs a failed query's SQL and the database's reason, never its parameters (a row's personal data)", () => {
    const { log, lines } = capture();
    const cause = Object.assign(
      new Error('null value in column "note" of relation "decisions" violates not-null constraint'),
      {
        code: "23502",
      },
    );
    const failed = new DrizzleQueryError(
      'insert into "decisions" ("customer_name", "note") values ($1, $2)',
      ["Ann Ample", "ann@example.com"],
      cause,
    );
    log.error(errorFields(failed), "run could not be finalized");
    const text = JSON.stringify(lines);
    expect(text).not.toContain("Ann Ample");
    expect(text).not.toContain("ann@example.com");
    expect(lines[0]).toMatchObject({
      error: {
        message: expect.stringContaining('insert into "decisions"'),
        cause: { message: expect.stringContaining("violates not-null constraint"), code: "23502" },
      },
    });
  });

  it("redacts secrets and customers' words whatever a caller passes", () => {
    const { log, lines } = capture();
    log.info(
      {
        password: "hunter2",
        authorization: "Bearer hitl_abc",
        text: "my television arrived broken",
        message: "Dear Lars",
        payload: { customerEmail: "lars@example.com" },
        detail: { email: "lars@example.com", token: "t0k3n", content: "hello" },
        runId: "run-1",
      },
      "something happened",
    );
    const line = JSON.stringify(lines[0]);
    for (const secret of [
      "hunter2",
      "hitl_abc",
      "television",
      "Dear Lars",
      "lars@example.com",
      "t0k3n",
      "hello",
    ]) {
      expect(line).not.toContain(secret);
    }
    expect(lines[0]).toMatchObject({ runId: "run-1", msg: "something happened" });
  });

  it("keeps an error's type and message, and debug lines only at debug", () => {
    const { log, lines } = capture();
    log.error(errorFields(new TypeError("boom")), "failed");
    log.debug("not shown");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: "error", error: { name: "TypeError", message: "boom" } });
    const debug = capture("debug");
    debug.log.debug("shown");
    expect(debug.lines).toHaveLength(1);
  });
});

describe("metric labels", () => {
  it("keep short lowercase words and turn anything else into a fallback", () => {
    expect(boundedLabel("refund_approval")).toBe("refund_approval");
    expect(boundedLabel("gpt-4o-mini")).toBe("gpt-4o-mini");
    expect(boundedLabel("3f2c9a1e-0000-4000-8000-000000000000")).toBe("other");
    expect(boundedLabel("Approve")).toBe("other");
    expect(boundedLabel(42, "answered")).toBe("answered");
    expect(boundedLabel("x".repeat(41))).toBe("other");
  });
});
