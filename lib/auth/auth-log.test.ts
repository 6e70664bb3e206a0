import { captureLog } from "@/e2e/support/log-capture";
import { betterAuthLog } from "./auth-log";

function capture(level = "debug") {
  const { log, lines } = captureLog(level);
  return { log: betterAuthLog(() => log), lines };
}

describe("better-auth's log", () => {
  it("becomes JSON lines of the server's logger at better-auth's level", () => {
    const { log, lines } = capture();
    log("error", "Failed to create session", new Error("connection reset"));
    log("info", "[better-auth] something happened");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({
      level: "error",
      component: "better-auth",
      msg: "Failed to create session",
      error: { name: "Error", message: "connection reset" },
    });
    expect(lines[1]).toMatchObject({ level: "info", msg: "something happened" });
  });

  it("never writes the users, requests or rows better-auth passes along", () => {
    const { log, lines } = capture();
    log(
      "warn",
      "user lookup",
      { email: "lars@example.com", token: "t0k3n" },
      "lars@example.com",
      new Request("http://x/api/auth?cookie=abc"),
    );
    const text = JSON.stringify(lines);
    expect(text).not.toContain("lars@example.com");
    expect(text).not.toContain("t0k3n");
    expect(text).not.toContain("cookie=abc");
    expect(lines[0]).toMatchObject({ level: "warn", args: ["object", "string", "object"] });
  });

  it("logs the base-URL warning we answer with trustedOrigins at debug, hidden at the default level", () => {
    const message =
      "[better-auth] Base URL is not set. Set the baseURL option or BETTER_AUTH_URL env, or use a dynamic baseURL.";
    const debug = capture("debug");
    debug.log("warn", message);
    expect(debug.lines).toEqual([expect.objectContaining({ level: "debug", component: "better-auth" })]);
    const info = capture("info");
    info.log("warn", message);
    expect(info.lines).toEqual([]);
  });
});
