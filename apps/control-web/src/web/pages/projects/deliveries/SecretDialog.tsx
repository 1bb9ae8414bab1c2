import { useEffect, useId, useRef, useState } from 'react';
import { CopyButton } from '../../../components/CopyButton';

/**
 * A signing secret the Workflow API just answered (creation or rotation), shown this once in a modal: masked
 * until asked for, with a copy button. It lives only in the caller's state; closing the dialog forgets it.
 */
export function SecretDialog({
  secret,
  title,
  onDone,
}: {
  secret: string | undefined;
  title: string;
  onDone: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const [visible, setVisible] = useState(false);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (secret && !dialog.open) {
      setVisible(false);
      dialog.showModal();
    } else if (!secret && dialog.open) dialog.close();
  }, [secret]);
  return (
    <dialog
      ref={ref}
      className="dialog"
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault();
        onDone();
      }}
    >
      <h2 id={titleId}>{title}</h2>
      {secret && (
        <div className="dialog-body">
          <p>
            Copy the signing secret now and store it on the receiving server, which checks each delivery's
            signature with it. It is not shown again: if it is lost, rotate the secret.
          </p>
          <div className="secret-row">
            <code
              className="secret"
              data-testid="signing-secret"
              aria-label={visible ? 'The signing secret' : 'The signing secret, hidden'}
            >
              {visible ? secret : `whsec_${'•'.repeat(24)}`}
            </code>
            <button type="button" onClick={() => setVisible((v) => !v)} aria-pressed={visible}>
              {visible ? 'Hide secret' : 'Show secret'}
            </button>
            <CopyButton text={secret} label="Copy secret" />
          </div>
        </div>
      )}
      <div className="dialog-actions">
        <button type="button" className="button-primary" autoFocus onClick={onDone}>
          I have stored the secret
        </button>
      </div>
    </dialog>
  );
}
