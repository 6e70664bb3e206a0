/*
 * Every error an operator may see, in their words: what happened and what to do, with the stable code kept for
 * support as a details line ("forbidden · four_eyes_supervisor"). Isomorphic (the console renders it; the server's
 * own message stays in the API for clients and logs). A code not listed falls back to its type's sentence, or to the
 * server's message when that is already plain words.
 */

export interface OperatorMessage {
  /** What happened, for the operator. */
  text: string;
  /** What to do about it, or null when nothing is needed. */
  todo: string | null;
  /** For support: the code as a details line (type · subject), never shown as the message itself. */
  details: string;
}

type Entry = { text: string; todo?: string };

const BY_CODE: Record<string, Entry> = {
  "forbidden:four_eyes_supervisor": {
    text: "Refunds of this size need a supervisor to approve them.",
    todo: "Ask a supervisor to approve it, or reject it with a note.",
  },
  "forbidden:four_eyes_own_thread": {
    text: "You supplied input that led to this request, so someone else must approve it.",
    todo: "Ask a colleague to take this decision.",
  },
  "forbidden:four_eyes_edited": {
    text: "You edited this thread's state, so someone else must send the reply drafted from your edit.",
    todo: "Ask a colleague to send it.",
  },
  "forbidden:four_eyes_both_reviews": {
    text: "You approved the other review of this change; both may not be approved by the same person.",
    todo: "Ask a colleague to take this review.",
  },
  "forbidden:review_role": { text: "This review needs a higher role than yours.", todo: "Ask a supervisor." },
  "forbidden:role": { text: "Your role does not allow this.", todo: "Ask an admin if you need it." },
  "forbidden:api_key_scope": { text: "An intake key cannot do this; it needs a signed-in operator." },
  "forbidden:cross_site": {
    text: "The request came from another site and was refused.",
    todo: "Reload the page.",
  },
  "unauthorized:session": { text: "Your session has ended.", todo: "Sign in again." },
  "unauthorized:sign_in": { text: "The email or password is not right." },
  "rate_limited:sign_in": { text: "Too many sign-in attempts.", todo: "Wait a minute and try again." },
  "rate_limited:sign_in_busy": { text: "Sign-in is busy.", todo: "Wait a moment and try again." },
  "conflict:interrupt_resolved": {
    text: "Someone else already took this decision.",
    todo: "Reload the page to see what they decided.",
  },
  "conflict:interrupt_superseded": {
    text: "This decision no longer applies: the thread moved on.",
    todo: "Reload the page to see what it waits for now.",
  },
  "conflict:interrupt_pending": {
    text: "The thread is waiting for a decision, so it cannot take new input now.",
    todo: "Take the decision first (reload the page if you do not see it).",
  },
  "conflict:run_active": {
    text: "The agent is already working on this thread.",
    todo: "Wait until it finishes.",
  },
  "conflict:run_finished": { text: "This run has already ended.", todo: "Reload the page." },
  // A run stopped by an operator or at a time limit: the server's words say who or which limit; this says what next.
  "conflict:run_cancelled": {
    text: "The run was stopped.",
    todo: "Try again to continue from the last saved step, or fork the thread from its history.",
  },
  "unavailable:run_timeout": {
    text: "The run took longer than its time limit and was stopped.",
    todo: "Try again to continue from the last saved step.",
  },
  "unavailable:model_timeout": {
    text: "The model did not answer in time.",
    todo: "Try again to continue from the last saved step; if it keeps happening, check the model provider.",
  },
  "conflict:retry": { text: "Another change reached the thread at the same moment.", todo: "Try again." },
  "conflict:graph_version": {
    text: "This thread was started on an agent version this server can no longer continue.",
    todo: "A supervisor must move it to the current version, fork it, or close it.",
  },
  "conflict:decision_pending": {
    text: "The run ended while a decision was still open.",
    todo: "A supervisor must look at this thread.",
  },
  "conflict:effect_task": { text: "This task was already handled.", todo: "Reload the page." },
  "conflict:last_admin": { text: "The last admin cannot lose the admin role." },
  "conflict:self_demotion": { text: "You cannot lower your own role.", todo: "Ask another admin." },
  "conflict:user_exists": { text: "A user with this email already exists." },
  "not_found:thread": { text: "This thread does not exist (or was removed)." },
  "not_found:interrupt": { text: "This decision does not exist any more.", todo: "Reload the page." },
  "not_found:checkpoint": {
    text: "This step of the history is not there any more.",
    todo: "Reload the page.",
  },
  "unprocessable:answer": { text: "The answer is not complete.", todo: "Check the fields and try again." },
  "unprocessable:empty_message": { text: "The message is empty.", todo: "Write a message first." },
  "unprocessable:message_too_long": { text: "The message is too long.", todo: "Shorten it." },
  "unprocessable:fork_values": {
    text: "The state changes are not valid for this thread.",
    todo: "Correct the values and fork again.",
  },
  "unprocessable:fork_node": {
    text: "The branch cannot continue from that step.",
    todo: "Pick another step.",
  },
  "unprocessable:no_message": { text: "The agent needs a message to start.", todo: "Write one first." },
  "unavailable:network": {
    text: "The server cannot be reached.",
    todo: "Check your connection; the page tries again by itself.",
  },
  "unavailable:database": { text: "The database is not answering.", todo: "Try again in a minute." },
  "unavailable:database_busy": {
    text: "The database is busy and did not get to this in time. Nothing was saved.",
    todo: "Try again in a moment.",
  },
  "unavailable:draining": { text: "The server is restarting.", todo: "Try again in a moment." },
  "unavailable:runtime": { text: "The agent is not available right now.", todo: "Try again in a minute." },
  "internal:run_failed": {
    text: "The agent stopped: one of its steps failed.",
    todo: "Try again; if it fails again, a supervisor can fork the thread from an earlier step.",
  },
  "internal:run_abandoned": {
    text: "The server running this thread stopped before it finished.",
    todo: "Try again: it continues from the last saved step.",
  },
  "internal:stream": { text: "The live connection broke.", todo: "Reload the page." },
};

const BY_TYPE: Record<string, Entry> = {
  bad_request: { text: "The request was not understood.", todo: "Reload the page and try again." },
  unauthorized: { text: "You need to sign in.", todo: "Sign in again." },
  forbidden: { text: "You may not do this.", todo: "Ask someone with the right role." },
  not_found: { text: "This is not there any more.", todo: "Reload the page." },
  conflict: { text: "Something changed meanwhile.", todo: "Reload the page and try again." },
  payload_too_large: { text: "That is too long to send.", todo: "Shorten it." },
  unsupported_media_type: { text: "The request was not understood.", todo: "Reload the page and try again." },
  unprocessable: { text: "Some of what was entered is not valid.", todo: "Check the fields and try again." },
  rate_limited: { text: "Too many attempts.", todo: "Wait a minute and try again." },
  unavailable: { text: "The server is not available right now.", todo: "Try again in a minute." },
  internal: {
    text: "Something went wrong on the server.",
    todo: "Try again; if it keeps failing, tell support.",
  },
};

/** Words a developer would write: error codes, zod's wording, the API's vocabulary. */
const DEVELOPER_WORDING = /[a-z_]+:[a-z_]+|expected|zod|resume|`|✖|→|\b[a-z]+_[a-z_]+\b/i;

/** An error (code and the server's message) as the operator reads it. */
export function operatorMessage(error: { code: string; message?: string | null }): OperatorMessage {
  const [type = "internal", subject = "unknown"] = error.code.split(":", 2);
  const known = BY_CODE[error.code];
  const server = error.message?.trim();
  // An internal error's text is for logs (a stack's message), never for the operator.
  const plain = type !== "internal" && server && !DEVELOPER_WORDING.test(server) ? server : null;
  const limit = server ? /<=\s*(\d+)\s*characters/.exec(server)?.[1] : undefined;
  // The server's own words when they are plain (they name the specifics: who, which version), with what to do from
  // the map; a limit read out of a validation message; else the code's sentence, else the type's.
  const entry: Entry | undefined = plain
    ? { text: plain, todo: known?.todo ?? BY_TYPE[type]?.todo }
    : limit
      ? { text: `The text is longer than its limit of ${limit} characters.`, todo: "Shorten it." }
      : (known ?? BY_TYPE[type] ?? BY_TYPE.internal);
  return {
    text: entry?.text ?? "Something went wrong.",
    todo: entry?.todo ?? null,
    details: `${type} · ${subject}`,
  };
}

/** The message and what to do, in one line (for places without room for a details line). */
export function operatorSentence(error: { code: string; message?: string | null }): string {
  const m = operatorMessage(error);
  return m.todo ? `${m.text} ${m.todo}` : m.text;
}
