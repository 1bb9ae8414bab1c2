import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { ConfigError } from '@svc/service-kit';
import type { StageHandler } from '../domain/stage-handler';

const nodeRequire = createRequire(__filename);

/**
 * Loads the handler module named by `AGENT_HANDLER` (a path, absolute or relative to `cwd`). The handler is
 * the module's default export, its `handle` export, or the module itself when it is a function. A module
 * that cannot be loaded or exports no function is refused with a ConfigError naming the path.
 */
export function loadStageHandler(modulePath: string, cwd: string = process.cwd()): StageHandler {
  const absolute = resolve(cwd, modulePath);
  let loaded: unknown;
  try {
    loaded = nodeRequire(absolute);
  } catch (error) {
    const message = (error as { message?: unknown } | null)?.message;
    const reason = (typeof message === 'string' ? message : String(error)).split('\n')[0];
    throw new ConfigError(`reference-agent: AGENT_HANDLER ${modulePath} cannot be loaded: ${reason}`);
  }
  const exports = loaded as { default?: unknown; handle?: unknown } | undefined;
  const candidates = [exports?.default, exports?.handle, loaded];
  const handler = candidates.find((candidate) => typeof candidate === 'function');
  if (!handler) {
    throw new ConfigError(
      `reference-agent: AGENT_HANDLER ${modulePath} exports no handler function (a default export or "handle")`,
    );
  }
  return handler as StageHandler;
}
