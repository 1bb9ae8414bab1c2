import type { OpenApiDocument } from '@svc/contracts';
import { listOperations } from '@svc/service-kit';
import { encodePathSegment } from './operation-fuzz';
import type { FuzzActor, FuzzTarget } from './operation-fuzz';

/**
 * What the request pipeline answers before any schema is read, held to the document for every path and
 * operation: 405 with `Allow` for a method a path lacks, 415 for a body that is not JSON, 413 over the limit.
 */

const HTTP_METHODS = ['GET', 'PUT', 'POST', 'DELETE', 'PATCH'] as const;

/**
 * Sends every method a path of the document does not support (path ids from the fixtures) and returns each
 * answer that is not 405 `method_not_allowed` with an `Allow` listing exactly the path's methods.
 */
export async function checkUnsupportedMethods(doc: OpenApiDocument, target: FuzzTarget): Promise<string[]> {
  const wrong: string[] = [];
  const byPath = new Map<string, string[]>();
  for (const op of listOperations(doc))
    byPath.set(op.path, [...(byPath.get(op.path) ?? []), op.method.toUpperCase()]);
  for (const [template, methods] of byPath) {
    const path = template.replace(/\{([A-Za-z0-9_]+)\}/g, (_m, name: string) =>
      encodePathSegment(target.fixtures[name]?.[0] ?? 'x_0000'),
    );
    for (const method of HTTP_METHODS.filter((m) => !methods.includes(m))) {
      const res = await fetch(`${target.baseUrl}${path}`, {
        method,
        headers: target.credentials.api_key ?? {},
      });
      const body = (await res.json().catch(() => ({}))) as { code?: string };
      const allow = (res.headers.get('allow') ?? '')
        .split(',')
        .map((m) => m.trim())
        .filter(Boolean)
        .sort();
      if (
        res.status !== 405 ||
        body.code !== 'method_not_allowed' ||
        allow.join() !== [...methods].sort().join()
      ) {
        wrong.push(`${method} ${template}: ${res.status} ${body.code ?? ''} Allow: ${allow.join(', ')}`);
      }
    }
  }
  return wrong;
}

/**
 * For every operation that takes a JSON body, as the first actor it accepts that the target can act as: a
 * body that is not JSON must be 415 `unsupported_media_type` and a JSON body over the service's limit 413
 * `payload_too_large`, each a status the operation documents. Returns every answer that is otherwise.
 */
export async function checkBodyRefusals(
  doc: OpenApiDocument,
  target: FuzzTarget,
  limitBytes = 1024 * 1024,
): Promise<string[]> {
  const wrong: string[] = [];
  const oversized = JSON.stringify({ padding: 'a'.repeat(limitBytes + 1024) });
  for (const op of listOperations(doc).filter((o) => o.hasJsonBody)) {
    const actor = (op.actors as FuzzActor[]).find((a) => target.credentials[a] !== undefined);
    if (!actor) continue;
    const path = op.path.replace(/\{([A-Za-z0-9_]+)\}/g, (_m, name: string) =>
      encodePathSegment(target.fixtures[name]?.[0] ?? 'x_0000'),
    );
    const responses = (op.raw.responses ?? {}) as Record<string, unknown>;
    for (const [contentType, body, status, code] of [
      ['text/plain', 'not json', 415, 'unsupported_media_type'],
      ['application/json', oversized, 413, 'payload_too_large'],
    ] as const) {
      const res = await fetch(`${target.baseUrl}${path}`, {
        method: op.method.toUpperCase(),
        headers: {
          ...target.credentials[actor],
          'content-type': contentType,
          'idempotency-key': 'fuzz-body',
        },
        body,
      });
      const answer = (await res.json().catch(() => ({}))) as { code?: string };
      if (res.status !== status || answer.code !== code || !responses[String(status)]) {
        wrong.push(
          `${op.operationId} (${contentType}${status === 413 ? ', over the limit' : ''}): ${res.status} ${answer.code ?? ''}${responses[String(status)] ? '' : `, ${status} not documented`}`,
        );
      }
    }
  }
  return wrong;
}
