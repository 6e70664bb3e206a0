import "server-only";
import { mkdir, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import nodemailer from "nodemailer";
import { type EffectConnector, type EffectDelivery, refused, retryable } from "./connector";

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
 * Email through nodemailer. The Message-ID derives from the effect, so a retry after an attempt whose outcome is
 * unknown (SMTP has no lookup) carries the same id and a receiving system can recognise it; the file transport
 * writes one file per effect, so a retry overwrites rather than duplicates.
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
  const stream = smtp
    ? null
    : nodemailer.createTransport({ streamTransport: true, buffer: true, newline: "unix" });
  return {
    kind: "email",
    async deliver(effect: EffectDelivery) {
      const email = effect.payload as unknown as EmailMessage;
      const message = {
        from,
        to: email.to,
        subject: email.subject,
        text: email.body,
        messageId: `<${effect.id}@hitl-console.local>`,
        headers: { "X-Effect-Key": effect.idempotencyKey },
      };
      try {
        if (smtp) {
          const info = await smtp.sendMail(message);
          return { ok: true, providerRef: info.messageId ?? null };
        }
        const info = await stream!.sendMail(message);
        const directory = (transport as { directory: string }).directory;
        await mkdir(directory, { recursive: true, mode: 0o700 });
        const file = join(directory, `${effect.id}.eml`);
        await writeFile(`${file}.tmp`, info.message as Buffer, { mode: 0o600 });
        await rename(`${file}.tmp`, file);
        return { ok: true, providerRef: `file:${file}` };
      } catch (error) {
        return classify(error);
      }
    },
  };
}

/** SMTP 5xx replies are refusals (a bad address, a rejected message); anything else may pass on another try. */
function classify(error: unknown) {
  const e = error as { responseCode?: unknown; code?: unknown; message?: unknown };
  const what = `${typeof e.code === "string" ? `${e.code}: ` : ""}${String(e.message ?? error).slice(0, 300)}`;
  if (typeof e.responseCode === "number" && e.responseCode >= 500) return refused(what);
  if (e.code === "EENVELOPE") return refused(what);
  return retryable(what);
}
