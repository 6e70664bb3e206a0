import { request } from "node:http";
import { gunzipSync } from "node:zlib";
import { authHeaders } from "../support/auth";
import { pausedTicket } from "./client";
import { useTestServer } from "./setup";

/** One request as it goes over the wire: status, headers and the body's bytes exactly as sent (nothing decoded). */
function onTheWire(
  url: string,
  headers: Record<string, string>,
  maxMs = 10_000,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; bytes: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers, signal: AbortSignal.timeout(maxMs) }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes: Buffer.concat(chunks) }),
      );
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

const GZIP = { "accept-encoding": "gzip, deflate, br" };

/**
 * `next start` compresses what it can. A small JSON answer goes as it is (gzip would make it longer and cost a zlib
 * stream per request); a large one is still compressed for a client that asks; an event stream is
 * never compressed, so each event leaves when it is written.
 */
describe("response encoding", () => {
  const ctx = useTestServer("gzip");

  it("sends small JSON answers — success and errors alike — uncompressed", async () => {
    const supervisor = await authHeaders(ctx.url("/"), "supervisor");
    const cases = [
      { path: "/api/health", headers: GZIP, status: 200 },
      { path: `/api/threads/${crypto.randomUUID()}`, headers: GZIP, status: 401 },
      { path: `/api/threads/${crypto.randomUUID()}`, headers: { ...GZIP, ...supervisor }, status: 404 },
      { path: "/api/threads/%ZZ", headers: { ...GZIP, ...supervisor }, status: 400 },
    ];
    for (const c of cases) {
      const res = await onTheWire(ctx.url(c.path), c.headers);
      expect({ path: c.path, status: res.status }).toEqual({ path: c.path, status: c.status });
      expect(res.headers["content-encoding"]).toBeUndefined();
      expect(res.bytes.byteLength).toBeLessThan(1024);
      expect(res.headers["content-type"]).toMatch(/^application\/json/);
      expect(() => JSON.parse(res.bytes.toString("utf8"))).not.toThrow();
    }
  });

  it("still compresses a large JSON answer for a client that asks, and sends it whole to one that does not", async () => {
    const { threadId } = await pausedTicket(ctx.url(""), "ORD-1002");
    const supervisor = await authHeaders(ctx.url("/"), "supervisor");
    const path = `/api/threads/${threadId}/history?limit=50`;
    const plain = await onTheWire(ctx.url(path), { ...supervisor, "accept-encoding": "identity" });
    expect(plain.status).toBe(200);
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(plain.bytes.byteLength).toBeGreaterThan(1024);

    const zipped = await onTheWire(ctx.url(path), { ...supervisor, ...GZIP });
    expect(zipped.status).toBe(200);
    expect(zipped.headers["content-encoding"]).toBe("gzip");
    expect(zipped.bytes.byteLength).toBeLessThan(plain.bytes.byteLength);
    expect(JSON.parse(gunzipSync(zipped.bytes).toString("utf8"))).toEqual(
      JSON.parse(plain.bytes.toString("utf8")),
    );
  });

  it("never compresses an event stream", async () => {
    const { threadId } = await pausedTicket(ctx.url(""), "ORD-1003");
    const supervisor = await authHeaders(ctx.url("/"), "supervisor");
    const res = await onTheWire(ctx.url(`/api/threads/${threadId}/events?after=0`), {
      ...supervisor,
      ...GZIP,
      accept: "text/event-stream",
    });
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^text\/event-stream/);
    expect(res.headers["content-encoding"]).toBeUndefined();
    expect(res.bytes.toString("utf8")).toContain("RUN_FINISHED");
  });
});
