import { SMTPServer } from "smtp-server";

/** A message the in-process SMTP server accepted. */
export interface ReceivedMail {
  messageId: string | null;
  to: string[];
  subject: string | null;
  /** The effect's idempotency key (our X-Effect-Key header). */
  effectKey: string | null;
  raw: string;
}

/**
 * Chances per message (0…1): a transient 451 at RCPT TO (greylisting: before the message is sent), a transient 451
 * after the whole message (a content check), a connection refused with 421.
 */
export interface SmtpFaults {
  rejectRcpt451?: number;
  reject451?: number;
  refuseConnection?: number;
  /** Reject every message with 451 until cleared. */
  down?: boolean;
}

export interface TestSmtpServer {
  /** `smtp://127.0.0.1:<port>` for SMTP_URL. */
  url: string;
  /** Every message accepted, in order (a duplicate delivery shows up twice). */
  received: ReceivedMail[];
  setFaults(faults: SmtpFaults): void;
  close(): Promise<void>;
}

function header(raw: string, name: string): string | null {
  const head = raw.split(/\r?\n\r?\n/, 1)[0] ?? "";
  const match = head.match(new RegExp(`^${name}:[ \\t]*(.*(?:\\r?\\n[ \\t].*)*)`, "im"));
  return match ? match[1]!.replace(/\r?\n[ \t]+/g, " ").trim() : null;
}

const transient = (message: string, responseCode: number) =>
  Object.assign(new Error(message), { responseCode });

/** A real SMTP server in this process (no TLS, no auth), counting the messages it accepts. */
export async function startTestSmtpServer(
  options: { faults?: SmtpFaults; random?: () => number } = {},
): Promise<TestSmtpServer> {
  let faults: SmtpFaults = options.faults ?? {};
  const random = options.random ?? Math.random;
  const received: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onConnect(_session, callback) {
      if (random() < (faults.refuseConnection ?? 0)) {
        return callback(transient("injected: try again later", 421));
      }
      callback();
    },
    onRcptTo(_address, _session, callback) {
      if (random() < (faults.rejectRcpt451 ?? 0)) {
        return callback(transient("injected: greylisted, try again later", 451));
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        if (faults.down || random() < (faults.reject451 ?? 0)) {
          return callback(transient("injected: mailbox busy, try again", 451));
        }
        const raw = Buffer.concat(chunks).toString("utf8");
        received.push({
          messageId: header(raw, "Message-ID"),
          to: session.envelope.rcptTo.map((r) => r.address),
          subject: header(raw, "Subject"),
          effectKey: header(raw, "X-Effect-Key"),
          raw,
        });
        callback();
      });
    },
  });
  // A client killed mid-session (the chaos test kills the server) resets its connection: not the server's error.
  server.on("error", () => {});
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.server.address();
  if (!address || typeof address !== "object") throw new Error("test smtp server: no port");
  return {
    url: `smtp://127.0.0.1:${address.port}`,
    received,
    setFaults(next) {
      faults = next;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
