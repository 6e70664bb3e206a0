export default function HomePage() {
  return (
    <section className="max-w-3xl space-y-4">
      <h1 className="text-2xl font-semibold">Human-in-the-loop refund console</h1>
      <p className="text-slate-700">
        Agents built with LangGraph.js run here with every step checkpointed in PostgreSQL. When an agent
        needs a person — to approve a customer refund, pick an option, fill in missing information or confirm
        an email — it pauses, and the decision waits in this console until an operator takes it. Runs resume
        exactly where they stopped, after a refresh, a second click, a crash or a deploy.
      </p>
      <p className="text-slate-700">
        Engineers can read a thread&apos;s full checkpoint history and branch from any point to see what would
        have happened with a different answer.
      </p>
      <p className="text-sm text-slate-500">
        Server health:{" "}
        <a className="underline" href="/api/health">
          /api/health
        </a>
      </p>
    </section>
  );
}
