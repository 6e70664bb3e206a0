import fc from "fast-check";
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { AgentMarkdown } from "./agent-markdown";

/*
 * An agent's description renders as Markdown and never as markup of its own: whatever the text holds — generated
 * HTML, script tags, event handlers, javascript: links — the output has no script, no handler attribute and no URL
 * that runs code.
 */

const render = (text: string) => renderToStaticMarkup(createElement(AgentMarkdown, { text }));

/** Markup that runs or loads something: such an element, a handler attribute inside a tag, a link that runs code. */
const DANGEROUS =
  /<(script|iframe|img|svg|style|object|embed|link|meta)\b|<[^>]*\son[a-z]+\s*=|(href|src)="\s*(javascript|data|vbscript):/i;

describe("an agent's Markdown", () => {
  it("renders what agent-inbox descriptions use: bold, emphasis, code, lists, safe links", () => {
    const html = render(
      "Register **Browser Vendor A** as a _supplier_.\n\n- check `VAT-123`\n- [their site](https://example.com)",
    );
    expect(html).toContain("<strong>Browser Vendor A</strong>");
    expect(html).toContain("<em>supplier</em>");
    expect(html).toMatch(/<code[^>]*>VAT-123<\/code>/);
    expect(html).toMatch(/<li>check/);
    expect(html).toContain('href="https://example.com"');
    expect(html).toContain('rel="noopener noreferrer nofollow"');
    expect(html).not.toContain("**");
  });

  it("drops raw HTML and links that run code", () => {
    const html = render(
      'Hi <script>alert(1)</script><img src=x onerror="alert(2)"> [click](javascript:alert(3)) ![x](https://e.example/x.png)',
    );
    expect(html).not.toMatch(DANGEROUS);
    expect(html).toContain("Hi");
  });

  it("never lets generated hostile text through as markup", () => {
    const hostile = fc.constantFrom(
      "<script>alert(1)</script>",
      '<img src=x onerror="alert(1)">',
      "<svg onload=alert(1)>",
      "[a](javascript:alert(1))",
      "[a](JaVaScRiPt:alert(1))",
      "[a](data:text/html,<script>alert(1)</script>)",
      "<iframe src=javascript:alert(1)>",
      '<a href="javascript:alert(1)">x</a>',
      "<style>*{}</style>",
      "![i](x onerror=alert(1))",
    );
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string(), hostile), { maxLength: 8 }), (parts) => {
        expect(render(parts.join(" "))).not.toMatch(DANGEROUS);
      }),
      { numRuns: 300 },
    );
  });
});
