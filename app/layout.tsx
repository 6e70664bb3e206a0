import type { Metadata } from "next";
import Link from "next/link";
import type { ReactNode } from "react";
import { NavLink } from "@/components/ui/nav-link";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "Refund console", template: "%s · Refund console" },
  description: "Human-in-the-loop console for checkpointed LangGraph agents",
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body className="min-h-screen">
        <a
          href="#main"
          className="sr-only rounded-md bg-white px-3 py-2 text-sm font-semibold text-indigo-800 shadow focus:not-sr-only focus:absolute focus:left-4 focus:top-3 focus:z-50"
        >
          Skip to main content
        </a>
        <header className="border-b border-slate-200 bg-white">
          <div className="mx-auto flex max-w-6xl items-center gap-6 px-6 py-3">
            <Link href="/" className="font-semibold text-slate-900">
              Refund console
            </Link>
            <nav aria-label="Main" className="flex items-center gap-2">
              <NavLink href="/" exact>
                Inbox
              </NavLink>
              <NavLink href="/threads/new">New ticket</NavLink>
            </nav>
          </div>
        </header>
        <main id="main" tabIndex={-1} className="mx-auto max-w-6xl px-6 py-8 focus:outline-none">
          {children}
        </main>
      </body>
    </html>
  );
}
