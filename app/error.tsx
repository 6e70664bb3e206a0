"use client";

import { Button } from "@/components/ui/button";

/**
 * A page whose server render failed — most often a database that did not answer within its limit (503
 * `unavailable:database_busy`, logged by the server). Production hides the error's text from the browser, so the page
 * says what an operator can do, in their words, and offers to try again; the digest lets support find the log line.
 */
export default function PageError({
  error,
  reset,
}: {
  error: Error & { digest?: string };
  reset: () => void;
}) {
  return (
    <main className="mx-auto max-w-2xl p-6" data-testid="page-error">
      <div
        role="alert"
        className="space-y-3 rounded-lg border border-amber-300 bg-amber-50 p-5 text-amber-950"
      >
        <h1 className="text-base font-semibold">This page could not be loaded</h1>
        <p className="text-sm">
          The server or its database did not answer in time. Nothing you did was lost. Try again in a moment.
        </p>
        <Button onClick={() => reset()} data-testid="page-error-retry">
          Try again
        </Button>
        {error.digest && <p className="text-xs opacity-80">Details for support: {error.digest}</p>}
      </div>
    </main>
  );
}
