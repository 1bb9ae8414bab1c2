import { isDeepStrictEqual } from 'node:util';
import type { OpenApiDocument } from '@svc/contracts';

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

function stripExamples(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripExamples);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== 'example' && key !== 'examples')
      .map(([key, v]) => [key, stripExamples(v)]),
  );
}

function renameRefs(value: unknown, renames: Map<string, string>): unknown {
  if (Array.isArray(value)) return value.map((v) => renameRefs(v, renames));
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, v]) => [
      key,
      key === '$ref' && typeof v === 'string' ? (renames.get(v) ?? v) : renameRefs(v, renames),
    ]),
  );
}

/**
 * Security requirements name their schemes (not by `$ref`), so a renamed scheme must be renamed in each
 * requirement; operations that relied on the document's top-level `security` get it written out.
 */
function renameSecurity(
  paths: unknown,
  schemeRenames: Map<string, string>,
  documentSecurity: unknown,
): unknown {
  const rename = (requirements: unknown) =>
    Array.isArray(requirements)
      ? requirements.map((req: Record<string, unknown>) =>
          Object.fromEntries(
            Object.entries(req).map(([scheme, scopes]) => [schemeRenames.get(scheme) ?? scheme, scopes]),
          ),
        )
      : requirements;
  return Object.fromEntries(
    Object.entries(paths as Record<string, Record<string, unknown>>).map(([path, item]) => [
      path,
      Object.fromEntries(
        Object.entries(item).map(([key, op]) =>
          METHODS.includes(key)
            ? [
                key,
                {
                  ...(op as object),
                  security: rename((op as { security?: unknown }).security ?? documentSecurity),
                },
              ]
            : [key, op],
        ),
      ),
    ]),
  );
}

/** Public paths only: no internal routes, no routes of the signed-in application, no system routes. */
function publicPaths(doc: OpenApiDocument, serverUrl: string) {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    if (path.startsWith('/internal/') || !path.startsWith('/api/')) continue;
    const kept: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(item)) {
      if (METHODS.includes(key)) {
        if ((value as Record<string, unknown>)['x-svc-visibility'] === 'app') continue;
        kept[key] = value;
      } else kept[key] = value;
    }
    if (Object.keys(kept).some((key) => METHODS.includes(key)))
      out[path] = { ...kept, servers: [{ url: serverUrl }] };
  }
  return out;
}

/**
 * The integration boundary as one OpenAPI 3.1 document: the public hub and Workflow API operations, each
 * path carrying the server it is served from. Components of the same name merge when identical; a
 * differing workflow component is renamed `Workflow<Name>` and its references follow.
 */
export function buildIntegrationContract(input: {
  hub: OpenApiDocument;
  workflow: OpenApiDocument;
  hubUrl: string;
  workflowUrl: string;
}): OpenApiDocument {
  const components: Record<string, Record<string, unknown>> = {};
  const renames = new Map<string, string>();
  const schemeRenames = new Map<string, string>();
  for (const [section, entries] of Object.entries(input.hub.components ?? {}))
    components[section] = { ...entries };
  for (const [section, entries] of Object.entries(input.workflow.components ?? {})) {
    const target = (components[section] ??= {});
    for (const [name, value] of Object.entries(entries)) {
      if (!(name in target) || isDeepStrictEqual(target[name], value)) {
        target[name] = value;
        continue;
      }
      const renamed = `Workflow${name.charAt(0).toUpperCase()}${name.slice(1)}`;
      renames.set(`#/components/${section}/${name}`, `#/components/${section}/${renamed}`);
      if (section === 'securitySchemes') schemeRenames.set(name, renamed);
      target[renamed] = value;
    }
  }
  const workflowPaths = renameSecurity(
    renameRefs(publicPaths(input.workflow, input.workflowUrl), renames),
    schemeRenames,
    input.workflow.security,
  ) as Record<string, Record<string, unknown>>;
  const renamedComponents = renameRefs(components, renames) as Record<string, Record<string, unknown>>;
  return stripExamples({
    openapi: '3.1.0',
    info: {
      title: 'Integration contract',
      version: `${input.hub.info.version}+workflow.${input.workflow.info.version}`,
      description:
        'The supported integration boundary: public hub and Workflow API operations. Each path names the server it is served from.',
    },
    servers: [{ url: input.hubUrl }, { url: input.workflowUrl }],
    paths: { ...publicPaths(input.hub, input.hubUrl), ...workflowPaths },
    components: renamedComponents,
  }) as OpenApiDocument;
}
