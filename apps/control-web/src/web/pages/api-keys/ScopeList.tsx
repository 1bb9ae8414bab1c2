import { isDestructive } from './scope-catalog';

/** Scopes as code chips; destructive or privileged ones are marked in words, not only by colour. */
export function ScopeList({ scopes }: { scopes: readonly string[] }) {
  return (
    <span className="scope-list">
      {scopes.map((scope) =>
        isDestructive(scope) ? (
          <code key={scope} className="scope scope-destructive" title="Destructive or privileged scope">
            {scope} <span className="scope-flag">destructive</span>
          </code>
        ) : (
          <code key={scope} className="scope">
            {scope}
          </code>
        ),
      )}
    </span>
  );
}
