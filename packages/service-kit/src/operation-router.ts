import Ajv2020 from 'ajv/dist/2020';
import type { ErrorObject, ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { Express, NextFunction, Request, RequestHandler, Response, Router } from 'express';
import type { Logger } from 'pino';
import { authenticate, checkAccess } from '@svc/auth';
import type { Actor, ActorKind, CredentialResolver } from '@svc/auth';
import type { OpenApiDocument, PathParamsOf, QueryOf, RequestBodyOf, HandlerResultOf } from '@svc/contracts';
import { AppError } from './errors';
import type { FieldError } from './errors';
import { labelOperation } from './metrics';
import { assertStorableText } from './text-check';

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
type Method = (typeof METHODS)[number];

export type ParticipantRole = 'owner' | 'admin' | 'member' | 'viewer';

/** What the contract says about one operation; the router enforces it. */
export interface OperationMeta {
  operationId: string;
  method: Method;
  /** OpenAPI path, e.g. `/api/v1/workspaces/{workspace}/projects`. */
  path: string;
  actors: (ActorKind | 'anonymous')[];
  scopes: string[];
  participantRoles: ParticipantRole[] | undefined;
  visibility: 'public' | 'app';
  pathParams: string[];
  hasJsonBody: boolean;
  bodyRequired: boolean;
}

export interface OperationContext<Op = unknown> {
  req: Request;
  res: Response;
  params: PathParamsOf<Op>;
  query: QueryOf<Op>;
  body: RequestBodyOf<Op>;
  actor: Actor | undefined;
  requestId: string;
  operation: OperationMeta;
}

export type OperationHandler<Op> = (
  ctx: OperationContext<Op>,
) => Promise<HandlerResultOf<Op>> | HandlerResultOf<Op>;

/** One handler per operation of the document, keyed by operationId: the compiler checks the set is complete. */
export type OperationHandlers<Ops> = { [K in keyof Ops]: OperationHandler<Ops[K]> };

/**
 * Runs after authentication, authorization and path validation, before the query and body are validated
 * and before the handler — for checks that need data (workspace membership, resource ownership). It sees
 * `params` and `actor`; `query` and `body` are not filled yet. Throw an AppError to refuse.
 */
export type OperationGuard = (ctx: OperationContext) => Promise<void> | void;

export interface MountOptions<Ops, Elsewhere extends keyof Ops = never> {
  document: OpenApiDocument;
  /** One handler per operation, except those listed in {@link MountOptions.servedElsewhere}. */
  handlers: Omit<OperationHandlers<Ops>, Elsewhere>;
  /**
   * Operations of the document this router does not mount because another handler of the service answers
   * them (e.g. a reverse proxy in front of the app): they need no handler, get no route and no 405.
   * Each must be an operation of the document.
   */
  servedElsewhere?: readonly Elsewhere[];
  /** How credentials become actors. Omit for services whose document has anonymous operations only. */
  resolver?: CredentialResolver;
  guards?: OperationGuard[];
  /**
   * Express middleware run on each operation with a credential, once the credential is resolved (`req.actor`,
   * `req.params`) and before access is checked and anything else is done: admission control. Operations open to
   * anonymous callers (probes, documents) do not pass through it.
   */
  admission?: RequestHandler;
  /** Check every success body against the contract (on in tests; a mismatch is a 500 and an error log). */
  validateResponses?: boolean;
  logger: Logger;
}

function toExpressPath(path: string): string {
  return path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
}

/** Rewrites local `#/…` references so schemas cut out of the document still resolve against it. */
function anchorRefs(value: unknown, documentId: string): unknown {
  if (Array.isArray(value)) return value.map((v) => anchorRefs(v, documentId));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] =
      k === '$ref' && typeof v === 'string' && v.startsWith('#/')
        ? `${documentId}${v}`
        : anchorRefs(v, documentId);
  }
  return out;
}

function resolveLocalRef<T>(doc: OpenApiDocument, value: T): T {
  const ref = (value as { $ref?: unknown } | undefined)?.$ref;
  if (typeof ref !== 'string' || !ref.startsWith('#/')) return value;
  let node: unknown = doc;
  for (const part of ref.slice(2).split('/')) node = (node as Record<string, unknown> | undefined)?.[part];
  if (node === undefined) throw new Error(`unresolved reference ${ref}`);
  return resolveLocalRef(doc, node as T);
}

interface ParameterObject {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: Record<string, unknown>;
}

/** Lists the operations of a document with their annotations. Fails loudly on a document the lint would refuse. */
export function listOperations(
  doc: OpenApiDocument,
): (OperationMeta & { raw: Record<string, unknown>; parameters: ParameterObject[] })[] {
  const out: (OperationMeta & { raw: Record<string, unknown>; parameters: ParameterObject[] })[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {}) as [string, Record<string, unknown>][]) {
    const shared = ((item.parameters as unknown[]) ?? []).map((p) =>
      resolveLocalRef(doc, p as ParameterObject),
    );
    for (const method of METHODS) {
      const raw = item[method] as Record<string, unknown> | undefined;
      if (!raw) continue;
      const own = ((raw.parameters as unknown[]) ?? []).map((p) =>
        resolveLocalRef(doc, p as ParameterObject),
      );
      const parameters = [
        ...shared.filter((s) => !own.some((o) => o.name === s.name && o.in === s.in)),
        ...own,
      ];
      const actors = raw['x-svc-actors'];
      const scopes = raw['x-svc-scopes'];
      if (typeof raw.operationId !== 'string' || !Array.isArray(actors) || !Array.isArray(scopes)) {
        throw new Error(
          `${method.toUpperCase()} ${path}: operationId, x-svc-actors and x-svc-scopes are required`,
        );
      }
      const requestBody = resolveLocalRef(doc, raw.requestBody as Record<string, unknown> | undefined);
      const jsonBody = (requestBody?.content as Record<string, unknown> | undefined)?.['application/json'];
      out.push({
        operationId: raw.operationId,
        method,
        path,
        actors: actors as OperationMeta['actors'],
        scopes: scopes as string[],
        participantRoles: raw['x-svc-participant-roles'] as ParticipantRole[] | undefined,
        visibility: raw['x-svc-visibility'] === 'app' ? 'app' : 'public',
        pathParams: parameters.filter((p) => p.in === 'path').map((p) => p.name),
        hasJsonBody: jsonBody !== undefined,
        bodyRequired: jsonBody !== undefined && requestBody?.required === true,
        raw,
        parameters,
      });
    }
  }
  return out;
}

function describeErrors(prefix: string, errors: ErrorObject[] | null | undefined): FieldError[] {
  return (errors ?? []).slice(0, 20).map((error) => {
    const extra =
      error.keyword === 'required'
        ? `/${(error.params as { missingProperty: string }).missingProperty}`
        : error.keyword === 'additionalProperties'
          ? `/${(error.params as { additionalProperty: string }).additionalProperty}`
          : '';
    const location = `${prefix}${error.instancePath}${extra}`;
    const message =
      error.keyword === 'additionalProperties'
        ? 'is not a known field'
        : error.keyword === 'required'
          ? 'is required'
          : (error.message ?? 'is invalid');
    return { location, message };
  });
}

function validationFailed(errors: FieldError[]): AppError {
  const first = errors[0];
  return new AppError({
    status: 400,
    code: 'validation_failed',
    detail: first ? `${first.location} ${first.message}` : 'The request is invalid.',
    extra: { errors },
  });
}

function objectSchema(documentId: string, params: ParameterObject[]): Record<string, unknown> {
  return {
    type: 'object',
    properties: Object.fromEntries(params.map((p) => [p.name, anchorRefs(p.schema ?? {}, documentId)])),
    required: params.filter((p) => p.required || p.in === 'path').map((p) => p.name),
  };
}

/** True when the request carries a body, whatever its type. */
function bodySent(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0';
}

/**
 * The operations grouped by path, literal segments before parameters at the first place two paths differ
 * (`/deliveries/replay` before `/deliveries/{deliveryId}`), otherwise in document order: a request is
 * answered by the most specific path it matches, whatever the document's order.
 */
function bySpecificity<T extends { path: string }>(operations: T[]): T[] {
  const shape = (path: string) => path.split('/').map((part) => (part.startsWith('{') ? 1 : 0));
  const firstIndex = new Map<string, number>();
  operations.forEach((o, i) => firstIndex.set(o.path, firstIndex.get(o.path) ?? i));
  const compare = (a: T, b: T): number => {
    const [x, y] = [shape(a.path), shape(b.path)];
    for (let i = 0; i < Math.min(x.length, y.length); i += 1) {
      if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number);
    }
    // A total order (shape, then length, then first place in the document), so a path's methods stay together.
    if (x.length !== y.length) return x.length - y.length;
    return (firstIndex.get(a.path) as number) - (firstIndex.get(b.path) as number);
  };
  return [...operations].sort(compare);
}

/**
 * Mounts every operation of a contract document on an express app. For each request: authenticate the
 * credential, check actors and scopes declared in the contract, validate path, query and body with ajv
 * against the contract's schemas, run the guards, call the handler and send its typed result. Methods the
 * path does not support get 405 with `Allow`. Throws at start-up when a handler is missing or unknown.
 */
export function mountOperations<Ops, Elsewhere extends keyof Ops = never>(
  app: Express | Router,
  options: MountOptions<Ops, Elsewhere>,
): OperationMeta[] {
  const { document, logger } = options;
  const handlers = options.handlers as Record<string, OperationHandler<unknown>>;
  const elsewhere = new Set((options.servedElsewhere ?? []).map(String));
  const documentId = `urn:svc:openapi:${document.info.title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
  const bodyAjv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  const paramAjv = new Ajv2020({ strict: false, allErrors: true, coerceTypes: 'array', useDefaults: true });
  for (const ajv of [bodyAjv, paramAjv]) {
    addFormats(ajv);
    ajv.addSchema({ $id: documentId, components: document.components ?? {} });
  }

  const listed = listOperations(document);
  const known = new Set(listed.map((o) => o.operationId));
  const strayElsewhere = [...elsewhere].filter((id) => !known.has(id));
  if (strayElsewhere.length > 0) {
    throw new Error(
      `${document.info.title}: served elsewhere but not in the contract: ${strayElsewhere.join(', ')}`,
    );
  }
  const operations = listed.filter((o) => !elsewhere.has(o.operationId));
  const missing = operations
    .filter((o) => typeof handlers[o.operationId] !== 'function')
    .map((o) => o.operationId);
  const unknown = Object.keys(handlers).filter((id) => !known.has(id) || elsewhere.has(id));
  if (missing.length > 0 || unknown.length > 0) {
    throw new Error(
      `${document.info.title}: handlers do not match the contract (missing: ${missing.join(', ') || 'none'}; not in the contract or served elsewhere: ${unknown.join(', ') || 'none'})`,
    );
  }

  const byPath = new Map<string, Method[]>();
  const ordered = bySpecificity(operations);
  for (const [index, op] of ordered.entries()) {
    const handler = handlers[op.operationId] as OperationHandler<unknown>;
    const anonymous = op.actors.includes('anonymous');
    const rule = { actors: op.actors.filter((a): a is ActorKind => a !== 'anonymous'), scopes: op.scopes };
    const pathParams = op.parameters.filter((p) => p.in === 'path');
    const queryParams = op.parameters.filter((p) => p.in === 'query');
    const headerParams = op.parameters.filter((p) => p.in === 'header').map((p) => p.name.toLowerCase());
    const validatePath: ValidateFunction | undefined =
      pathParams.length > 0 ? paramAjv.compile(objectSchema(documentId, pathParams)) : undefined;
    const validateQuery: ValidateFunction | undefined =
      queryParams.length > 0 ? paramAjv.compile(objectSchema(documentId, queryParams)) : undefined;
    const requestBody = resolveLocalRef(document, op.raw.requestBody as Record<string, unknown> | undefined);
    const bodySchema = (requestBody?.content as Record<string, { schema?: unknown }> | undefined)?.[
      'application/json'
    ]?.schema;
    const validateBody = bodySchema
      ? bodyAjv.compile(anchorRefs(bodySchema, documentId) as object)
      : undefined;
    const responseValidators = new Map<number, ValidateFunction>();
    if (options.validateResponses) {
      for (const [status, response] of Object.entries((op.raw.responses as Record<string, unknown>) ?? {})) {
        const schema = (
          resolveLocalRef(document, response as Record<string, unknown>).content as
            Record<string, { schema?: unknown }> | undefined
        )?.['application/json']?.schema;
        if (schema && /^2\d\d$/.test(status)) {
          responseValidators.set(Number(status), bodyAjv.compile(anchorRefs(schema, documentId) as object));
        }
      }
    }

    const pipeline: RequestHandler[] = [
      (_req: Request, res: Response, next: NextFunction) => {
        labelOperation(res, op.operationId);
        next();
      },
    ];
    if (!anonymous) {
      if (!options.resolver) throw new Error(`${op.operationId}: a credential resolver is required`);
      pipeline.push(authenticate(options.resolver));
      if (options.admission) pipeline.push(options.admission);
    }
    pipeline.push(async (req: Request, res: Response, next: NextFunction) => {
      try {
        if (!anonymous) {
          const denied = checkAccess(req.actor, rule);
          if (denied) throw denied;
        }
        const params: Record<string, unknown> = { ...req.params };
        assertStorableText(params, 'path');
        if (validatePath && !validatePath(params))
          throw validationFailed(describeErrors('path', validatePath.errors));
        const ctx: OperationContext = {
          req,
          res,
          params: params as never,
          query: {} as never,
          body: undefined as never,
          actor: req.actor,
          requestId: req.requestId,
          operation: op,
        };
        // The text rule is the same for every operation and every resource, so it tells a caller nothing
        // about what a valid request would be: it runs before the guards, and a NUL is 400 everywhere.
        const query: Record<string, unknown> = { ...(req.query as Record<string, unknown>) };
        assertStorableText(query, 'query');
        for (const name of headerParams) assertStorableText(req.headers[name], `header/${name}`);
        if (op.hasJsonBody && req.body !== undefined) assertStorableText(req.body, 'body');

        // Guards decide access from the credential and the path alone, before the query and body are
        // validated: a caller without access learns nothing about what a valid request would be.
        for (const guard of options.guards ?? []) await guard(ctx);

        if (validateQuery && !validateQuery(query))
          throw validationFailed(describeErrors('query', validateQuery.errors));
        ctx.query = query as never;

        const hasBody = req.body !== undefined;
        if (op.hasJsonBody) {
          if (!hasBody && bodySent(req)) {
            throw new AppError({
              status: 415,
              code: 'unsupported_media_type',
              detail: 'Send the request body as application/json.',
            });
          }
          if (!hasBody && op.bodyRequired) {
            throw new AppError({
              status: 400,
              code: 'body_required',
              detail: 'This request needs a JSON body.',
            });
          }
          if (hasBody && validateBody && !validateBody(req.body)) {
            throw validationFailed(describeErrors('body', validateBody.errors));
          }
          ctx.body = req.body as never;
        }
        const result = (await handler(ctx)) as {
          status: number;
          body?: unknown;
          headers?: Record<string, string>;
        };
        const check = responseValidators.get(result.status);
        if (check && !check(result.body)) {
          logger.error(
            { operation: op.operationId, errors: describeErrors('response', check.errors) },
            'response does not match the contract',
          );
          throw new AppError({
            status: 500,
            code: 'response_contract_violation',
            message: 'response contract violation',
          });
        }
        if (result.headers) res.set(result.headers);
        if (result.body === undefined) res.status(result.status).end();
        else res.status(result.status).json(result.body);
      } catch (error) {
        next(error);
      }
    });
    (app as Router)[op.method](toExpressPath(op.path), ...pipeline);
    byPath.set(op.path, [...(byPath.get(op.path) ?? []), op.method]);
    // After a path's last method, its 405: a method the path lacks must not fall through to a path with a
    // parameter in that place (`DELETE /agents/me` is not `DELETE /agents/{agentId}`).
    if (ordered[index + 1]?.path !== op.path) {
      const allow = (byPath.get(op.path) ?? []).map((m) => m.toUpperCase()).join(', ');
      (app as Router).all(toExpressPath(op.path), (req: Request, _res: Response, next: NextFunction) => {
        next(
          new AppError({
            status: 405,
            code: 'method_not_allowed',
            detail: `${req.method} is not supported here; use ${allow}.`,
            headers: { Allow: allow },
          }),
        );
      });
    }
  }
  return operations.map(({ raw: _raw, parameters: _parameters, ...meta }) => meta);
}
