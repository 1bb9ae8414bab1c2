import { createInterface } from 'node:readline';

/**
 * What the accounts commands read from the user: a line, a password without echo, or all of stdin
 * (`--password-stdin`). Prompts go to stderr so stdout stays one JSON document with `--json`.
 */
export function stdinIsTerminal(): boolean {
  return process.stdin.isTTY === true;
}

/** All of stdin as text (for `--password-stdin`). */
export async function readAllStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}

/** One line typed on the terminal, echoed. */
export async function promptLine(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  try {
    return await new Promise<string>((resolve) => rl.question(question, resolve));
  } finally {
    rl.close();
  }
}

/** A line typed on the terminal without echo (the password). Ctrl-C or Ctrl-D cancels. */
export async function promptHidden(question: string): Promise<string> {
  const stdin = process.stdin;
  // Echo off before the prompt shows: whatever is typed once the prompt is visible must never be echoed.
  stdin.setRawMode(true);
  process.stderr.write(question);
  stdin.resume();
  stdin.setEncoding('utf8');
  try {
    return await new Promise<string>((resolve, reject) => {
      let value = '';
      const onData = (chunk: string) => {
        for (const ch of chunk) {
          if (ch === '\r' || ch === '\n') {
            stdin.off('data', onData);
            resolve(value);
            return;
          }
          if (ch === '\u0003' || ch === '\u0004') {
            stdin.off('data', onData);
            reject(new Error('cancelled'));
            return;
          }
          if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
          else value += ch;
        }
      };
      stdin.on('data', onData);
    });
  } finally {
    stdin.setRawMode(false);
    stdin.pause();
    process.stderr.write('\n');
  }
}
