import { Fragment } from 'react';

/**
 * Text written for API readers, shown to a person: a name between backticks (`code`) becomes a code span,
 * so no literal backtick reaches the screen.
 */
export function RichText({ text }: { text: string }) {
  const parts = text.split(/`([^`]+)`/);
  return (
    <>
      {parts.map((part, index) =>
        index % 2 === 1 ? (
          <code key={index}>{part}</code>
        ) : (
          <Fragment key={index}>{part.replace(/`/g, '')}</Fragment>
        ),
      )}
    </>
  );
}
