import { readFileSync } from 'node:fs';
import path from 'node:path';

/** Version of the console router package, read from its package.json (one level above `src/` and `dist/`). */
export const RUNTIME_VERSION: string = (
  JSON.parse(readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as { version: string }
).version;
