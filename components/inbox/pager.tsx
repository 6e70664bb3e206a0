import { Button } from "@/components/ui/button";

/** Keyset pagination: "Back" returns to the previous page, "Next page" follows the cursor. */
export function Pager({
  pageNumber,
  hasNext,
  loading,
  onBack,
  onNext,
}: {
  pageNumber: number;
  hasNext: boolean;
  loading: boolean;
  onBack: () => void;
  onNext: () => void;
}) {
  if (pageNumber === 1 && !hasNext) return null;
  return (
    <nav aria-label="Pagination" className="flex items-center justify-between gap-4">
      <Button
        variant="secondary"
        onClick={onBack}
        disabled={pageNumber === 1 || loading}
        data-testid="page-back"
      >
        Back
      </Button>
      <span className="text-sm text-slate-700" data-testid="page-number">
        Page {pageNumber}
      </span>
      <Button variant="secondary" onClick={onNext} disabled={!hasNext || loading} data-testid="page-next">
        Next page
      </Button>
    </nav>
  );
}
