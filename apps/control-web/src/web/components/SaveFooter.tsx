import { ProblemMessage } from './ProblemMessage';

/**
 * The end of a settings form: its save button (or, for a reader who may not change it, who may), the line
 * saying it was saved, and the problem when it was not.
 */
export function SaveFooter({
  editable,
  busy,
  label,
  readOnly,
  saved,
  error,
  errorContext,
}: {
  editable: boolean;
  busy: boolean;
  /** The button's words, e.g. "Save limits". */
  label: string;
  /** What a reader sees instead of the button, e.g. "Only owners and admins change the run limits." */
  readOnly: string;
  saved: string | undefined;
  error: unknown;
  errorContext: string;
}) {
  return (
    <>
      {editable ? (
        <button type="submit" className="button-primary" disabled={busy}>
          {busy ? 'Saving…' : label}
        </button>
      ) : (
        <p className="muted">{readOnly}</p>
      )}
      {saved && (
        <p role="status" className="saved">
          {saved}
        </p>
      )}
      <ProblemMessage error={error} context={errorContext} />
    </>
  );
}
