import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { promises as fs } from 'node:fs';
import Ajv2020 from 'ajv/dist/2020';
import type { ErrorObject, ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { runtimeControlDocument } from '@svc/contracts';
import type { RuntimeControlApi } from '@svc/contracts';
import { SECRET_FILE_MODE } from './secret-files';
import { SupervisorError } from './agent-supervisor';
import type { AgentSupervisor, SupervisedAgentSpec } from './agent-supervisor';

export type RuntimeControlStatus = RuntimeControlApi.components['schemas']['RuntimeControlStatus'];
type RestartBody = NonNullable<
  RuntimeControlApi.paths['/agents/{name}/restart']['post']['requestBody']
>['content']['application/json'];

const DOC_ID = 'runtime-control';
const MAX_BODY_BYTES = 1024 * 1024;

/** Validators compiled from the runtime control contract itself (bodies and the agent name in paths). */
function contractValidators() {
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats(ajv);
  ajv.addSchema({ ...(runtimeControlDocument as object), $id: DOC_ID });
  const ref = (pointer: string) => ajv.compile({ $ref: `${DOC_ID}#${pointer}` });
  return {
    spec: ref('/components/schemas/SupervisedAgentSpec'),
    restart: ref('/paths/~1agents~1{name}~1restart/post/requestBody/content/application~1json/schema'),
    name: ref('/components/schemas/AgentName'),
  };
}

function describe(where: string, errors: ErrorObject[] | null | undefined) {
  return (errors ?? []).map((e) => ({
    location: `${where}${e.instancePath}`,
    message: `${e.message ?? 'invalid'}${e.keyword === 'additionalProperties' ? ` (${String((e.params as { additionalProperty?: string }).additionalProperty)})` : ''}`,
  }));
}

class Problem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly errors?: Array<{ location: string; message: string }>,
  ) {
    super(message);
  }
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  500: 'Internal Server Error',
};

function send(res: ServerResponse, status: number, body: unknown, type = 'application/json'): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': type,
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
  });
  res.end(text);
}

function sendProblem(res: ServerResponse, p: Problem): void {
  send(
    res,
    p.status,
    {
      type: 'about:blank',
      title: TITLES[p.status] ?? 'Error',
      status: p.status,
      code: p.code,
      detail: p.message,
      ...(p.errors ? { errors: p.errors } : {}),
    },
    'application/problem+json',
  );
}

async function readJson(req: IncomingMessage, required: boolean): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES)
      throw new Problem(413, 'body_too_large', 'the request body is larger than 1 MiB');
    chunks.push(chunk as Buffer);
  }
  if (size === 0) {
    if (required) throw new Problem(400, 'body_required', 'a JSON body is required');
    return undefined;
  }
  const type = String(req.headers['content-type'] ?? '');
  if (!/^application\/json\b/i.test(type)) {
    throw new Problem(415, 'unsupported_media_type', 'send the body as application/json');
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new Problem(400, 'body_invalid_json', 'the body is not valid JSON');
  }
}

function check<T>(validate: ValidateFunction, value: unknown, where: string): T {
  if (!validate(value)) {
    throw new Problem(
      400,
      'validation_failed',
      `the ${where} does not match the contract`,
      describe(where, validate.errors),
    );
  }
  return value as T;
}

export interface ControlServer {
  server: Server;
  close(): Promise<void>;
}

/**
 * Serves the runtime control API (contract `runtime-control.yaml`) on a Unix socket with mode 0600. Bodies are
 * validated against the contract's own schemas; errors are problem+json with a stable `code`; bodies (which may
 * carry an agent's token) are never logged.
 */
export async function startControlServer(options: {
  socketPath: string;
  supervisor: AgentSupervisor;
  status: () => Promise<RuntimeControlStatus>;
}): Promise<ControlServer> {
  const v = contractValidators();
  const { supervisor } = options;
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    const method = req.method ?? 'GET';
    const notAllowed = () =>
      new Problem(405, 'method_not_allowed', `${method} is not allowed on ${url.pathname}`);
    if (parts.length === 1 && parts[0] === 'status') {
      if (method !== 'GET') throw notAllowed();
      return send(res, 200, await options.status());
    }
    if (parts[0] !== 'agents' || parts.length > 3) {
      throw new Problem(404, 'not_found', `no route ${url.pathname}`);
    }
    if (parts.length === 1) {
      if (method === 'GET') return send(res, 200, { data: supervisor.list() });
      if (method !== 'POST') throw notAllowed();
      const spec = check<SupervisedAgentSpec>(v.spec, await readJson(req, true), 'body');
      return send(res, 201, { data: await supervisor.supervise(spec) });
    }
    const name = parts[1]!;
    if (parts.length === 3) {
      if (parts[2] !== 'restart') throw new Problem(404, 'not_found', `no route ${url.pathname}`);
      if (method !== 'POST') throw notAllowed();
      check<string>(v.name, name, 'path/name');
      const body = check<RestartBody | undefined>(v.restart, (await readJson(req, false)) ?? {}, 'body');
      return send(res, 200, { data: await supervisor.restart(name, body?.env, body?.set_env) });
    }
    // No supervised agent can have a name outside the contract's pattern: those are simply not found.
    if (method === 'GET') return send(res, 200, { data: supervisor.get(name) });
    if (method === 'DELETE') return send(res, 200, { data: await supervisor.stop(name) });
    throw notAllowed();
  };
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent) return res.destroy();
      if (error instanceof Problem) return sendProblem(res, error);
      if (error instanceof SupervisorError)
        return sendProblem(res, new Problem(error.status, error.code, error.message));
      sendProblem(res, new Problem(500, 'internal_error', 'the runtime could not answer'));
    });
  });
  await fs.rm(options.socketPath, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.socketPath, () => {
      server.off('error', reject);
      resolve();
    });
  });
  await fs.chmod(options.socketPath, SECRET_FILE_MODE);
  return {
    server,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await fs.rm(options.socketPath, { force: true });
    },
  };
}
