import "server-only";
import { mkdir, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import nodemailer from "nodemailer";
import {
  type DeliveryResult,
  defaultTaskActions,
  type EffectConnector,
  type EffectDelivery,
  type EffectKind,
  refused,
  retryable,
} from "../connector";

/** An email: its subject and recipient; one whose outcome is unknown may be confirmed as arrived. */
export const emailKind: EffectKind = {
  kind: "email",
  summary: (p) => `Email “${String(p.subject ?? "")}” to ${String(p.to ?? "")}`,
  taskActions: defaultTaskActions,
};

/** The email an `email` effect sends (its payload). */
export interface EmailMessage {
  emailId: string;
  to: string;
  subject: string;
  body: string;
}

/** How mail leaves: an SMTP server, or (the embedded default) one .eml file per email in a directory. */
export type MailTransportConfig = { smtpUrl: string } | { directory: string };

/**
 * Email through nodemailer. SMTP has no idempotency key to look up, so the one moment that matters is recorded: right
 * before the DATA terminator is written (the server accepts the message on it), the dispatcher durably marks the
 * effect handed over. A crash before that point leaves no mark and the email is sent again (the server never took the
 * unterminated message). A crash after it leaves the outcome unknown — the terminator may never have been written, or
 * the server may have accepted the message a moment before the crash — so the effect becomes `unconfirmed`: neither
 * sent twice nor called delivered, an operator resends it or confirms it arrived. The Message-ID derives from the
 * effect, so the mail server's log and a receiver can recognise it. The file transport writes one file per effect (a retry
 * overwrites it).
 */
export function emailConnector({
  from,
  transport,
}: {
  from: string;
  transport: MailTransportConfig;
}): EffectConnector {
  const smtp =
    "smtpUrl" in transport
      ? // The URL gives host, port, credentials; these bound how long one attempt may hang.
        nodemailer.createTransport({
          url: transport.smtpUrl,
          connectionTimeout: 10_000,
          greetingTimeout: 10_000,
          socketTimeout: 20_000,
        })
      : null;
  const composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: "windows" });
  return {
    kind: emailKind.kind,
    async deliver(effect: EffectDelivery) {
      const email = effect.payload as unknown as EmailMessage;
      const messageId = `<${effect.id}@hitl-console.local>`;
      if (effect.handedOver) return unconfirmed(messageId);
      try {
        const composed = await composer.sendMail({
          from,
          to: email.to,
          subject: email.subject,
          text: email.body,
          messageId,
          headers: { "X-Effect-Key": effect.idempotencyKey },
        });
        const raw = composed.message as Buffer;
        if (smtp) {
          const info = await smtp.sendMail({
            envelope: { from: composed.envelope.from, to: composed.envelope.to },
            raw: handOverLast(raw, () => effect.markHandedOver(messageId)),
          });
          return { ok: true, providerRef: info.messageId ?? messageId };
        }
        const directory = (transport as { directory: string }).directory;
        await mkdir(directory, { recursive: true, mode: 0o700 });
        const file = join(directory, `${effect.id}.eml`);
        await writeFile(`${file}.tmp`, raw, { mode: 0o600 });
        await rename(`${file}.tmp`, file);
        return { ok: true, providerRef: `file:${file}` };
      } catch (error) {
        return classify(error);
      }
    },
  };
}

/** The message as a stream that ends (letting the SMTP client write the DATA terminator) only after `beforeEnd`. */
function handOverLast(message: Buffer, beforeEnd: () => Promise<void>): Readable {
  let started = false;
  return new Readable({
    read() {
      if (started) return;
      started = true;
      this.push(message);
      beforeEnd().then(
        () => this.push(null),
        (error: Error) => this.destroy(error),
      );
    },
  });
}

/** The server stopped between the hand-over mark and the SMTP server's answer: nobody knows whether it arrived. */
function unconfirmed(messageId: string): DeliveryResult {
  return {
    ok: false,
    retry: false,
    unconfirmed: true,
    providerRef: messageId,
    error:
      `Handed to the mail server as this server stopped, before the mail server confirmed it: it may or may not have ` +
      `arrived (Message-ID ${messageId}). Send it again only if the recipient did not get it.`,
  };
}

/** SMTP 5xx replies are refusals (a bad address, a rejected message); 4xx and network errors may pass later. */
function classify(error: unknown) {
  const e = error as { responseCode?: unknown; code?: unknown; message?: unknown };
  const what = `${typeof e.code === "string" ? `${e.code}: ` : ""}${String(e.message ?? error).slice(0, 300)}`;
  // The server's reply code decides (a 451 at RCPT TO is greylisting: try later); without one, a refused envelope is
  // our own fault (no valid recipient) and other errors (connection, timeout) are worth another try.
  if (typeof e.responseCode === "number") return e.responseCode >= 500 ? refused(what) : retryable(what);
  if (e.code === "EENVELOPE") return refused(what);
  return retryable(what);
}
