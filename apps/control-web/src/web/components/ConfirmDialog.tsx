import { useEffect, useId, useRef, useState } from 'react';
import type { ReactNode } from 'react';
import { ProblemMessage } from './ProblemMessage';

export interface ConfirmDialogProps {
  open: boolean;
  title: string;
  children: ReactNode;
  /** Label of the confirming button (say what it does: "Evict agent", not "OK"). */
  confirmLabel: string;
  /** A destructive action: the button is red. */
  danger?: boolean;
  /** Runs the action; while it runs the buttons are disabled; a rejection is shown in the dialog. */
  onConfirm: () => Promise<void> | void;
  onClose: () => void;
}

/** The enabled controls Tab stops at inside `root`, in order. */
function tabStops(root: HTMLElement): HTMLElement[] {
  return Array.from(
    root.querySelectorAll<HTMLElement>('a[href], button, input, select, textarea, summary, [tabindex]'),
  ).filter((el) => el.tabIndex >= 0 && !el.hasAttribute('disabled'));
}

/**
 * A modal confirmation on the native `<dialog>`: focus moves into it and stays there (the browser's modal
 * leaves the page inert but lets Tab leave to its own toolbar, so Tab and Shift+Tab wrap around the dialog's
 * controls), Escape cancels, and focus returns to the button that opened it. Cancel is focused first, so
 * Enter never confirms by accident.
 */
export function ConfirmDialog(props: ConfirmDialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);

  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (props.open && !dialog.open) {
      setError(undefined);
      dialog.showModal();
    } else if (!props.open && dialog.open) dialog.close();
  }, [props.open]);

  const confirm = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await props.onConfirm();
      props.onClose();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <dialog
      ref={ref}
      className="dialog"
      aria-labelledby={titleId}
      onKeyDown={(event) => {
        if (event.key !== 'Tab') return;
        const stops = tabStops(event.currentTarget);
        const first = stops[0];
        const last = stops[stops.length - 1];
        if (!first || !last) return;
        const active = document.activeElement;
        if (event.shiftKey && (active === first || !event.currentTarget.contains(active))) {
          event.preventDefault();
          last.focus();
        } else if (!event.shiftKey && active === last) {
          event.preventDefault();
          first.focus();
        }
      }}
      onCancel={(event) => {
        event.preventDefault();
        if (!busy) props.onClose();
      }}
    >
      <h2 id={titleId}>{props.title}</h2>
      <div className="dialog-body">{props.children}</div>
      <ProblemMessage error={error} />
      <div className="dialog-actions">
        <button type="button" autoFocus onClick={props.onClose} disabled={busy}>
          Cancel
        </button>
        <button
          type="button"
          className={props.danger ? 'button-danger' : 'button-primary'}
          onClick={() => void confirm()}
          disabled={busy}
        >
          {busy ? 'Working…' : props.confirmLabel}
        </button>
      </div>
    </dialog>
  );
}
