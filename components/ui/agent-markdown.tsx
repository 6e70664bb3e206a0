import Markdown, { type Components } from "react-markdown";

/*
 * Words an agent wrote for a person (a tool call's description, agent-inbox's `description`), rendered as the Markdown
 * its authors write — bold, emphasis, code, lists, links — and nothing else. react-markdown builds React elements from
 * the parsed text and never injects HTML: raw HTML in the text is dropped (`skipHtml`), elements outside the list are
 * unwrapped to their text, and a link keeps only a safe URL (http, https, mailto; anything else is removed by the
 * library's own URL check) and opens outside the console.
 */

const ALLOWED = ["p", "strong", "em", "code", "pre", "ul", "ol", "li", "a", "br", "blockquote"];

const components: Components = {
  a: ({ href, children }) => (
    <a
      href={href}
      target="_blank"
      rel="noopener noreferrer nofollow"
      className="underline underline-offset-2"
    >
      {children}
    </a>
  ),
  code: ({ children }) => (
    <code className="rounded bg-slate-100 px-1 font-mono dark:bg-slate-800">{children}</code>
  ),
  ul: ({ children }) => <ul className="list-disc pl-5">{children}</ul>,
  ol: ({ children }) => <ol className="list-decimal pl-5">{children}</ol>,
};

/** An agent's Markdown as safe React elements (see above). */
export function AgentMarkdown({ text }: { text: string }) {
  return (
    <Markdown skipHtml allowedElements={ALLOWED} unwrapDisallowed components={components}>
      {text}
    </Markdown>
  );
}
