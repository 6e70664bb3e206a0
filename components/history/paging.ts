/**
 * Checkpoints per history page (the API's maximum): one request covers any ordinary thread. In a plain module, as
 * the server page reads it too (a value imported from a "use client" module is only a reference on the server).
 */
export const HISTORY_PAGE_SIZE = 200;
