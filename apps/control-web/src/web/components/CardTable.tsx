import { useLayoutEffect, useRef } from 'react';
import type { ReactNode, TableHTMLAttributes } from 'react';

/** Copies each column's header text onto the body cells of that column as `data-label`. */
function labelCells(table: HTMLTableElement): void {
  const headers = Array.from(table.tHead?.rows[0]?.cells ?? []).map((cell) => cell.textContent?.trim() ?? '');
  for (const body of Array.from(table.tBodies)) {
    for (const row of Array.from(body.rows)) {
      let column = 0;
      for (const cell of Array.from(row.cells)) {
        const label = cell.colSpan === 1 ? headers[column] : undefined;
        if (label && cell.getAttribute('data-label') !== label) cell.setAttribute('data-label', label);
        if (!label && cell.hasAttribute('data-label')) cell.removeAttribute('data-label');
        column += cell.colSpan;
      }
    }
  }
}

/**
 * A table that becomes a stack of cards on small screens (styles.css: `.cards` below 40rem, with `wide` below
 * 56rem): every body cell is labelled with its column's header, kept current as rows come and go.
 */
export function CardTable({
  wide = false,
  className,
  children,
  ...rest
}: TableHTMLAttributes<HTMLTableElement> & { wide?: boolean; children: ReactNode }) {
  const ref = useRef<HTMLTableElement>(null);
  useLayoutEffect(() => {
    const table = ref.current;
    if (!table) return;
    labelCells(table);
    const observer = new MutationObserver(() => labelCells(table));
    observer.observe(table, { childList: true, subtree: true, characterData: true });
    return () => observer.disconnect();
  }, []);
  const classes = [wide ? 'cards-md' : 'cards', className].filter(Boolean).join(' ');
  return (
    <table ref={ref} className={classes} {...rest}>
      {children}
    </table>
  );
}
