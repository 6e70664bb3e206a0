import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** One span as an OTLP/HTTP JSON export carries it (ids in hex). */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Record<string, string | number | boolean>;
  status?: { code?: number; message?: string };
  service?: string;
}

export interface OtlpReceiver {
  /** The endpoint to give OTEL_EXPORTER_OTLP_ENDPOINT (traces are POSTed to `<endpoint>/v1/traces`). */
  endpoint: string;
  spans: ReceivedSpan[];
  /** Export requests received, by path. */
  requests: string[];
  close(): Promise<void>;
}

type AnyValue = {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
};

/**
 * An in-process OTLP/HTTP receiver (JSON encoding, the exporter's default): it accepts `POST /v1/traces`, answers
 * 200 `{}` like a collector, and keeps every span it was sent.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      requests.push(`${req.method} ${req.url}`);
      if (req.method !== "POST" || req.url !== "/v1/traces") {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
        resourceSpans?: {
          resource?: { attributes?: { key: string; value: AnyValue }[] };
          scopeSpans?: {
            spans?: (Omit<ReceivedSpan, "attributes"> & {
              attributes?: { key: string; value: AnyValue }[];
            })[];
          }[];
        }[];
      };
      for (const resource of body.resourceSpans ?? []) {
        const service = attributesOf(resource.resource?.attributes)["service.name"];
        for (const scope of resource.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            spans.push({
              ...span,
              parentSpanId: span.parentSpanId || undefined,
              attributes: attributesOf(span.attributes),
              service: typeof service === "string" ? service : undefined,
            });
          }
        }
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function attributesOf(list: { key: string; value: AnyValue }[] | undefined) {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of list ?? []) {
    const v = value.stringValue ?? value.intValue ?? value.doubleValue ?? value.boolValue;
    if (v !== undefined) out[key] = typeof v === "string" && value.intValue !== undefined ? Number(v) : v;
  }
  return out;
}
