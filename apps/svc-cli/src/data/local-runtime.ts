import { existsSync } from 'node:fs';
import { unwrap } from '@svc/contracts';
import type { RuntimeControlApi } from '@svc/contracts';
import { controlSocketPath, createRuntimeControlClient } from './runtime-control-client';
import type { RuntimeControlClient } from './runtime-control-client';

export type RuntimeControlStatus = RuntimeControlApi.components['schemas']['RuntimeControlStatus'];
export type SupervisedAgent = RuntimeControlApi.components['schemas']['SupervisedAgent'];

export type LocalRuntime =
  | { running: true; client: RuntimeControlClient; status: RuntimeControlStatus; socket: string }
  | { running: false; socket: string; detail: string };

/**
 * Connects to the profile's local runtime (`svc runtime up`) over its control socket and reads its status.
 * `running: false` with a one-line reason when there is no socket or nothing answers on it.
 */
export async function connectLocalRuntime(stateDir: string, timeoutMs = 10_000): Promise<LocalRuntime> {
  const socket = controlSocketPath(stateDir);
  if (!existsSync(socket)) return { running: false, socket, detail: `no control socket at ${socket}` };
  const client = createRuntimeControlClient(socket, timeoutMs);
  try {
    const result = await client.GET('/status');
    if (!result.response.ok || !result.data) {
      return {
        running: false,
        socket,
        detail: `the runtime on ${socket} answered HTTP ${result.response.status}`,
      };
    }
    return { running: true, client, status: result.data, socket };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return {
      running: false,
      socket,
      detail: `nothing answers on ${socket}${code ? ` (${code})` : ''}`,
    };
  }
}

/** The supervised agent named `name`, or undefined when the runtime does not supervise it. */
export async function getSupervisedAgent(
  client: RuntimeControlClient,
  name: string,
): Promise<SupervisedAgent | undefined> {
  const result = await client.GET('/agents/{name}', { params: { path: { name } } });
  if (result.response.status === 404) return undefined;
  return unwrap(result);
}

/** Stops and forgets a supervised agent; undefined when the runtime did not supervise it. */
export async function stopSupervisedAgent(
  client: RuntimeControlClient,
  name: string,
): Promise<SupervisedAgent | undefined> {
  const result = await client.DELETE('/agents/{name}', { params: { path: { name } } });
  if (result.response.status === 404) return undefined;
  return unwrap(result);
}

export async function listSupervisedAgents(client: RuntimeControlClient): Promise<SupervisedAgent[]> {
  return unwrap(await client.GET('/agents'));
}
