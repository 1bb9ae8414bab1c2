import { usageError } from './cli-error';

/** Characters a shell would treat as operators; unquoted, they are refused rather than passed on literally. */
const SHELL_OPERATORS = new Set(['|', ';', '&', '<', '>', '`', '(', ')']);

/**
 * Splits `svc start --command "<cmd>"` into an argv the way a POSIX shell splits words, without running a
 * shell: whitespace separates words; single quotes keep everything literally; double quotes keep everything
 * but `\"`, `\\`, `\$` and `` \` `` escapes; a backslash outside quotes keeps the next character. Nothing is
 * expanded (`$HOME`, `*`, `~` stay as written). Unquoted shell operators (`|`, `;`, `&`, `<`, `>`, `` ` ``,
 * parentheses) and an unterminated quote are usage errors, so a pipeline is never silently passed as words.
 */
export function splitCommand(command: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let i = 0;
  const fail = (why: string) =>
    usageError(
      'command_invalid',
      `--command cannot be split into arguments: ${why}`,
      'quote the argument, or run a script file as the command',
    );
  while (i < command.length) {
    const c = command[i]!;
    if (c === "'") {
      const end = command.indexOf("'", i + 1);
      if (end < 0) throw fail('unterminated single quote');
      word += command.slice(i + 1, end);
      inWord = true;
      i = end + 1;
    } else if (c === '"') {
      i += 1;
      let closed = false;
      while (i < command.length) {
        const d = command[i]!;
        if (d === '"') {
          closed = true;
          i += 1;
          break;
        }
        if (d === '\\' && i + 1 < command.length && '"\\$`'.includes(command[i + 1]!)) {
          word += command[i + 1];
          i += 2;
          continue;
        }
        word += d;
        i += 1;
      }
      if (!closed) throw fail('unterminated double quote');
      inWord = true;
    } else if (c === '\\') {
      if (i + 1 >= command.length) throw fail('a trailing backslash');
      word += command[i + 1];
      inWord = true;
      i += 2;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
      i += 1;
    } else if (SHELL_OPERATORS.has(c)) {
      throw fail(`the shell operator "${c}" (svc runs the command without a shell)`);
    } else {
      word += c;
      inWord = true;
      i += 1;
    }
  }
  if (inWord) words.push(word);
  if (words.length === 0) throw fail('it is empty');
  if (words.some((w) => w.length === 0)) throw fail('an empty argument ("")');
  return words;
}
