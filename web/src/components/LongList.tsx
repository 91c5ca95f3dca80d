import { useEffect, useRef, type ReactNode } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';

/**
 * A list of rows that stays quick when it is long: past LONG_LIST rows it scrolls in a box of its own
 * and draws only the rows in view (@tanstack/react-virtual measures them, so a row that opens is
 * followed). A short list is an ordinary list in the page's flow.
 */

// A 2,000-call run drew 66,000 elements at once (its waterfall and steps) and the browser spent most of
// its time working out their styles: 18.3 s from opening the page to its waterfall and steps drawn,
// and its last call (3,999 messages) took 2.1 s to open. Drawing the rows in view: 1.6–2.4 s and 0.5 s
// (`npm run bench -- model-calls`, on a busy 2-core machine).
export const LONG_LIST = 150;

/**
 * How a row is drawn: its `<li>` carries `data-index={index}` and `ref={measure}` (the list measures
 * the rows it draws; a short list has no `measure`). Both stay the same between renders, so a memoised
 * row is not drawn again for them.
 */
export type RenderRow = (index: number, measure: ((el: HTMLLIElement | null) => void) | undefined) => ReactNode;

/** A row to bring into view: `n` counts the asks, so the same row can be asked for again. */
export interface Reveal {
  index: number;
  n: number;
}

export function LongList({
  count,
  rowHeight,
  className,
  label,
  testId,
  reveal,
  children,
}: {
  count: number;
  rowHeight: number;
  className: string;
  label: string;
  testId?: string;
  reveal?: Reveal | null;
  children: RenderRow;
}) {
  const long = count > LONG_LIST;
  const box = useRef<HTMLDivElement>(null);
  const list = useRef<HTMLOListElement>(null);
  const rows = useVirtualizer({ count: long ? count : 0, enabled: long, getScrollElement: () => box.current, estimateSize: () => rowHeight, overscan: 8 });

  useEffect(() => {
    if (!reveal) return;
    if (long) rows.scrollToIndex(reveal.index, { align: 'center' });
    // then the row into the page's view (the list may be below the fold), once it is drawn
    const frame = requestAnimationFrame(() => {
      const row = list.current?.querySelector(`:scope > [data-index="${reveal.index}"]`);
      (row ?? box.current)?.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
    });
    return () => cancelAnimationFrame(frame);
    // only a new ask moves the list, not the rows' own changes
  }, [reveal?.n]);

  if (!long) {
    return (
      <ol className={className} ref={list} data-testid={testId}>
        {Array.from({ length: count }, (_, i) => children(i, undefined))}
      </ol>
    );
  }
  const shown = rows.getVirtualItems();
  // the rows not drawn keep their room, so the box has its height and its scroll bar says where we are
  const before = shown.length ? shown[0].start : 0;
  const after = rows.getTotalSize() - (shown.length ? shown[shown.length - 1].end : 0);
  return (
    <div className="long-list" ref={box} role="region" aria-label={`${label} (${count.toLocaleString('en-US')}, scrolls)`} tabIndex={0} data-testid="long-list">
      <ol className={className} ref={list} data-testid={testId} style={{ paddingTop: before, paddingBottom: after }}>
        {shown.map((v) => children(v.index, rows.measureElement))}
      </ol>
    </div>
  );
}
