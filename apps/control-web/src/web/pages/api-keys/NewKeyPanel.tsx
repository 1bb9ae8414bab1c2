import { useEffect, useRef, useState } from 'react';
import { CopyButton } from '../../components/CopyButton';
import { dateTime } from '../../components/time';
import type { CreatedApiKey } from './CreateKeyForm';
import { ScopeList } from './ScopeList';

/**
 * The new key, shown this once: masked until asked for (so it does not sit on screen), with a copy button. The
 * secret lives only in this component's props; closing the panel forgets it.
 */
export function NewKeyPanel({ created, onDone }: { created: CreatedApiKey; onDone: () => void }) {
  const [visible, setVisible] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [created.id]);
  return (
    <div className="new-key" role="region" aria-labelledby="new-key-title">
      <h2 id="new-key-title" ref={heading} tabIndex={-1}>
        Key “{created.name}” created
      </h2>
      <p>
        Copy the key now and store it where its user reads secrets from. It is not shown again: if it is lost,
        revoke it and create another.
      </p>
      <div className="secret-row">
        <code className="secret" aria-label={visible ? 'The new key' : 'The new key, hidden'}>
          {visible ? created.key : `svc_${created.prefix}_${'•'.repeat(24)}`}
        </code>
        <button type="button" onClick={() => setVisible((v) => !v)} aria-pressed={visible}>
          {visible ? 'Hide key' : 'Show key'}
        </button>
        <CopyButton text={created.key} label="Copy key" />
      </div>
      <dl className="facts">
        <dt>Access</dt>
        <dd>
          {created.preset ? (
            <>
              preset <code>{created.preset}</code>:{' '}
            </>
          ) : null}
          <ScopeList scopes={created.scopes} />
        </dd>
        <dt>Expires</dt>
        <dd>{created.expires_at ? dateTime(created.expires_at) : 'never'}</dd>
      </dl>
      <button type="button" onClick={onDone}>
        I have stored the key
      </button>
    </div>
  );
}
