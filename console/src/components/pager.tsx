interface PagerProps {
  label: string;
  page: number;
  nextCursor: string | null | undefined;
  onNext: (cursor: string) => void;
  onPrevious: () => void;
}

/** Previous and Next for a list the API pages with cursors. */
export function Pager({ label, page, nextCursor, onNext, onPrevious }: PagerProps) {
  if (page === 1 && !nextCursor) return null;
  return (
    <nav class="pager" aria-label={label}>
      <button type="button" onClick={onPrevious} disabled={page === 1}>
        Previous page
      </button>
      <span>Page {page}</span>
      <button type="button" onClick={() => nextCursor && onNext(nextCursor)} disabled={!nextCursor}>
        Next page
      </button>
    </nav>
  );
}
