/**
 * The search box of the header — the only one on the page, at every width (two would share the id and every locator):
 * a plain GET form to /search (works before hydration, and with the keyboard).
 */
export function SearchBox() {
  return (
    <search>
      <form action="/search" method="get" className="flex w-full items-center gap-1" data-testid="search-box">
        <label htmlFor="site-search" className="sr-only">
          Search threads by order, customer or text
        </label>
        <input
          id="site-search"
          name="q"
          type="search"
          required
          maxLength={200}
          placeholder="Order, email, name…"
          className="min-w-0 flex-1 rounded-md border border-slate-300 bg-white px-2 py-1 text-sm text-slate-900 placeholder:text-slate-500 md:w-40 md:flex-none 2xl:w-56"
          data-testid="search-input"
        />
        <button
          type="submit"
          className="rounded-md px-2 py-1 text-sm font-medium text-slate-700 ring-1 ring-inset ring-slate-300 hover:bg-slate-50"
        >
          Search
        </button>
      </form>
    </search>
  );
}
