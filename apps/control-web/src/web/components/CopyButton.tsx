import { useEffect, useState } from 'react';

/**
 * Copies `text` to the clipboard; the result ("Copied" or the failure) is announced politely. The text itself
 * is never logged or stored by the page.
 */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [status, setStatus] = useState<'idle' | 'copied' | 'failed'>('idle');
  useEffect(() => {
    if (status === 'idle') return;
    const timer = setTimeout(() => setStatus('idle'), 3000);
    return () => clearTimeout(timer);
  }, [status]);

  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setStatus('copied');
    } catch {
      setStatus('failed');
    }
  };
  return (
    <span className="copy">
      <button type="button" onClick={() => void copy()}>
        {label}
      </button>
      <span role="status" aria-live="polite" className="copy-status">
        {status === 'copied'
          ? 'Copied'
          : status === 'failed'
            ? 'Copy failed: select the text and copy it'
            : ''}
      </span>
    </span>
  );
}
