/**
 * The API reference and the problem code pages as static HTML, rendered from the service's own OpenAPI
 * document and the problem code registry. Pages are self-contained: inline CSS, no script, no font, no image
 * and no link to another host, so reading them makes no request beyond the page itself.
 */
import { problemTypeUrl } from '@svc/contracts';
import type { OpenApiDocument, ProblemCodeDoc } from '@svc/contracts';

type Schema = Record<string, unknown>;

const METHODS = ['get', 'put', 'post', 'patch', 'delete', 'head', 'options', 'trace'] as const;

const STYLE = `
:root{color-scheme:light dark;--fg:#1d1f23;--muted:#5b6270;--bg:#fff;--panel:#f5f6f8;--line:#d9dce1;--accent:#2450b2}
@media (prefers-color-scheme:dark){:root{--fg:#e6e8eb;--muted:#a0a6b0;--bg:#15171a;--panel:#1e2125;--line:#33373d;--accent:#8fb0ff}}
*{box-sizing:border-box}body{margin:0;font:15px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
.wrap{display:flex;min-height:100vh}nav{width:290px;flex:none;border-right:1px solid var(--line);padding:20px;position:sticky;top:0;height:100vh;overflow:auto;font-size:14px}
nav ul{list-style:none;margin:0 0 12px;padding:0}nav li{margin:2px 0}nav h2{font-size:12px;text-transform:uppercase;letter-spacing:.05em;color:var(--muted);margin:16px 0 6px}
main{flex:1;min-width:0;padding:24px 40px 80px;max-width:1100px}a{color:var(--accent);text-decoration:none}a:hover{text-decoration:underline}
code,pre{font:13px/1.5 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}code{background:var(--panel);padding:1px 4px;border-radius:4px}
pre{background:var(--panel);padding:12px;border-radius:6px;overflow:auto}pre code{background:none;padding:0}
h1{font-size:28px;margin:0 0 8px}h2{font-size:22px;margin:36px 0 12px;padding-top:8px;border-top:1px solid var(--line)}h3{font-size:17px;margin:28px 0 6px}
.op{border:1px solid var(--line);border-radius:8px;padding:4px 18px 14px;margin:18px 0}.op h3{display:flex;gap:10px;align-items:baseline;flex-wrap:wrap}
.method{font:700 12px ui-monospace,monospace;text-transform:uppercase;padding:2px 8px;border-radius:4px;color:#fff;background:#5b6270}
.get{background:#2f7d4f}.post{background:#2450b2}.put,.patch{background:#9a6a00}.delete{background:#b3261e}
.muted{color:var(--muted)}table{border-collapse:collapse;width:100%;margin:8px 0;font-size:14px}th,td{text-align:left;vertical-align:top;padding:6px 8px;border-bottom:1px solid var(--line)}
th{font-weight:600;color:var(--muted)}.tag{display:inline-block;font-size:12px;border:1px solid var(--line);border-radius:10px;padding:0 8px;margin:0 4px 4px 0}
.req{color:#b3261e;font-size:12px}.fix{border-left:4px solid var(--accent);background:var(--panel);padding:10px 14px;border-radius:0 6px 6px 0}
@media (max-width:800px){.wrap{display:block}nav{position:static;width:auto;height:auto;border-right:0;border-bottom:1px solid var(--line)}main{padding:20px}}
`;

/** HTML-escapes text. */
export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/**
 * The small part of Markdown the documents use: paragraphs, `code`, **strong**, and lists. Links keep
 * their text only (and a relative target), so a description never makes the page point to another host.
 */
export function markdown(text: string | undefined, codes?: ReadonlySet<string>): string {
  if (!text) return '';
  const inline = (s: string) =>
    escapeHtml(s)
      .replace(/`([^`]+)`/g, (_m, content: string) =>
        codes?.has(content)
          ? `<a href="${problemTypeUrl(content)}"><code>${content}</code></a>`
          : `<code>${content}</code>`,
      )
      .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')
      .replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (_m, label: string, href: string) =>
        href.startsWith('/') || href.startsWith('#') ? `<a href="${href}">${label}</a>` : label,
      );
  return text
    .trim()
    .split(/\n\s*\n/)
    .map((block) => {
      const lines = block.split('\n');
      if (lines.every((l) => /^\s*[-*]\s+/.test(l))) {
        return `<ul>${lines.map((l) => `<li>${inline(l.replace(/^\s*[-*]\s+/, ''))}</li>`).join('')}</ul>`;
      }
      return `<p>${inline(lines.join(' '))}</p>`;
    })
    .join('');
}

function page(title: string, nav: string, body: string): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>` +
    `<body><div class="wrap"><nav>${nav}</nav><main>${body}</main></div></body></html>`
  );
}

const refName = (ref: string) => ref.split('/').pop() ?? ref;
const anchor = (prefix: string, name: string) => `${prefix}-${name.replace(/[^A-Za-z0-9_-]/g, '-')}`;

/** One line naming a schema's type: `string (date-time)`, `array of Thing`, `one of A, B`. */
function typeSummary(schema: Schema | undefined): string {
  if (!schema) return '';
  if (typeof schema.$ref === 'string') {
    const name = refName(schema.$ref);
    return `<a href="#${anchor('schema', name)}">${escapeHtml(name)}</a>`;
  }
  for (const key of ['oneOf', 'anyOf'] as const) {
    const options = schema[key];
    if (Array.isArray(options)) return `one of ${options.map((o) => typeSummary(o as Schema)).join(', ')}`;
  }
  if (Array.isArray(schema.allOf))
    return `all of ${schema.allOf.map((o) => typeSummary(o as Schema)).join(', ')}`;
  const types = Array.isArray(schema.type)
    ? (schema.type as string[])
    : schema.type
      ? [String(schema.type)]
      : [];
  let text = types.length > 0 ? types.map(escapeHtml).join(' | ') : 'any';
  if (types.includes('array')) text = `array of ${typeSummary(schema.items as Schema) || 'any'}`;
  if (typeof schema.format === 'string') text += ` (${escapeHtml(schema.format)})`;
  if (Array.isArray(schema.enum)) {
    text += `: ${schema.enum.map((v) => `<code>${escapeHtml(JSON.stringify(v))}</code>`).join(', ')}`;
  }
  if (schema.const !== undefined) text += ` = <code>${escapeHtml(JSON.stringify(schema.const))}</code>`;
  return text;
}

function constraints(schema: Schema): string {
  const parts: string[] = [];
  for (const key of [
    'minLength',
    'maxLength',
    'minimum',
    'maximum',
    'minItems',
    'maxItems',
    'pattern',
    'default',
  ]) {
    if (schema[key] !== undefined)
      parts.push(`${key} <code>${escapeHtml(JSON.stringify(schema[key]))}</code>`);
  }
  return parts.length > 0 ? `<div class="muted">${parts.join(' · ')}</div>` : '';
}

/** A schema as a table of its properties (inline objects nested once), or its type line. */
function schemaHtml(schema: Schema | undefined, depth = 0): string {
  if (!schema) return '';
  const properties = schema.properties as Record<string, Schema> | undefined;
  if (!properties || typeof schema.$ref === 'string') {
    const items = schema.items as Schema | undefined;
    if (items?.properties && depth < 2) return `<p>array of:</p>${schemaHtml(items, depth + 1)}`;
    return `<p>${typeSummary(schema)}</p>${markdown(schema.description as string | undefined)}`;
  }
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const rows = Object.entries(properties)
    .map(([name, prop]) => {
      const nested =
        depth < 2 && (prop.properties || (prop.items as Schema | undefined)?.properties) && !prop.$ref
          ? schemaHtml(prop, depth + 1)
          : '';
      return (
        `<tr><td><code>${escapeHtml(name)}</code>${required.has(name) ? ' <span class="req">required</span>' : ''}</td>` +
        `<td>${typeSummary(prop)}${constraints(prop)}</td><td>${markdown(prop.description as string | undefined)}${nested}</td></tr>`
      );
    })
    .join('');
  return (
    `${depth === 0 ? markdown(schema.description as string | undefined) : ''}` +
    `<table><thead><tr><th>Field</th><th>Type</th><th>Description</th></tr></thead><tbody>${rows}</tbody></table>`
  );
}

interface Operation {
  method: string;
  path: string;
  op: Record<string, unknown>;
  tag: string;
}

function operationsOf(document: OpenApiDocument): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method] as Record<string, unknown> | undefined;
      if (!op) continue;
      const tags = Array.isArray(op.tags) ? (op.tags as string[]) : [];
      operations.push({ method, path, op, tag: tags[0] ?? 'other' });
    }
  }
  return operations;
}

function resolveParameter(document: OpenApiDocument, parameter: Schema): Schema {
  if (typeof parameter.$ref === 'string') {
    return (document.components?.parameters?.[refName(parameter.$ref)] as Schema | undefined) ?? parameter;
  }
  return parameter;
}

function resolveResponse(document: OpenApiDocument, response: Schema): Schema {
  if (typeof response.$ref === 'string') {
    return (document.components?.responses?.[refName(response.$ref)] as Schema | undefined) ?? response;
  }
  return response;
}

function contentHtml(content: unknown): string {
  if (!content || typeof content !== 'object') return '';
  return Object.entries(content as Record<string, Schema>)
    .map(
      ([type, media]) =>
        `<div class="muted"><code>${escapeHtml(type)}</code></div>${schemaHtml(media.schema as Schema)}`,
    )
    .join('');
}

function operationHtml(
  document: OpenApiDocument,
  { method, path, op }: Operation,
  codes: ReadonlySet<string>,
): string {
  const id = anchor('op', String(op.operationId ?? `${method}-${path}`));
  const actors = (op['x-svc-actors'] as string[] | undefined) ?? [];
  const scopes = (op['x-svc-scopes'] as string[] | undefined) ?? [];
  const roles = (op['x-svc-participant-roles'] as string[] | undefined) ?? [];
  const who =
    actors.length > 0
      ? `<p><strong>Callers:</strong> ${actors.map((a) => `<span class="tag">${escapeHtml(a)}</span>`).join('')}` +
        (scopes.length > 0
          ? ` <strong>Scopes:</strong> ${scopes.map((s) => `<code>${escapeHtml(s)}</code>`).join(' ')}`
          : '') +
        (roles.length > 0
          ? ` <strong>Roles:</strong> ${roles.map((r) => `<code>${escapeHtml(r)}</code>`).join(' ')}`
          : '') +
        (op['x-svc-visibility'] === 'app' ? ' <span class="tag">signed-in application only</span>' : '') +
        `</p>`
      : '';
  const parameters = (Array.isArray(op.parameters) ? (op.parameters as Schema[]) : []).map((p) =>
    resolveParameter(document, p),
  );
  const parametersHtml =
    parameters.length > 0
      ? `<h4>Parameters</h4><table><thead><tr><th>Name</th><th>In</th><th>Type</th><th>Description</th></tr></thead><tbody>${parameters
          .map(
            (p) =>
              `<tr><td><code>${escapeHtml(String(p.name))}</code>${p.required ? ' <span class="req">required</span>' : ''}</td>` +
              `<td>${escapeHtml(String(p.in))}</td><td>${typeSummary(p.schema as Schema)}${p.schema ? constraints(p.schema as Schema) : ''}</td>` +
              `<td>${markdown(p.description as string | undefined)}</td></tr>`,
          )
          .join('')}</tbody></table>`
      : '';
  const body = op.requestBody as Schema | undefined;
  const bodyHtml = body
    ? `<h4>Request body${body.required ? ' <span class="req">required</span>' : ''}</h4>${markdown(body.description as string | undefined)}${contentHtml(body.content)}`
    : '';
  const responses = Object.entries((op.responses as Record<string, Schema> | undefined) ?? {})
    .map(([status, raw]) => {
      const response = resolveResponse(document, raw);
      const problem = Number(status) >= 400;
      return (
        `<tr><td><code>${escapeHtml(status)}</code></td><td>${markdown(response.description as string | undefined, codes)}` +
        (problem
          ? `<div class="muted">problem+json; see <a href="/docs/errors">error codes</a></div>`
          : contentHtml(response.content)) +
        `</td></tr>`
      );
    })
    .join('');
  return (
    `<section class="op" id="${id}"><h3><span class="method ${method}">${method}</span><code>${escapeHtml(path)}</code></h3>` +
    `<p><strong>${escapeHtml(String(op.summary ?? ''))}</strong> <span class="muted">${escapeHtml(String(op.operationId ?? ''))}</span></p>` +
    `${markdown(op.description as string | undefined, codes)}${who}${parametersHtml}${bodyHtml}` +
    `<h4>Responses</h4><table><thead><tr><th>Status</th><th>Description</th></tr></thead><tbody>${responses}</tbody></table></section>`
  );
}

function errorTable(codes: readonly ProblemCodeDoc[]): string {
  return (
    `<table><thead><tr><th>Code</th><th>Status</th><th>Meaning</th></tr></thead><tbody>` +
    codes
      .map(
        (c) =>
          `<tr><td><a href="${problemTypeUrl(c.code)}"><code>${escapeHtml(c.code)}</code></a></td>` +
          `<td>${c.status.join(', ')}</td><td>${escapeHtml(c.title)}</td></tr>`,
      )
      .join('') +
    `</tbody></table>`
  );
}

/** The whole API reference of one document: operations by tag, schemas and the error codes. */
export function renderApiReference(document: OpenApiDocument, codes: readonly ProblemCodeDoc[]): string {
  const operations = operationsOf(document);
  // Problem codes named in descriptions link to their pages.
  const codeSet = new Set(codes.map((c) => c.code));
  const tagOrder = [
    ...((document.tags as { name: string; description?: string }[] | undefined) ?? []).map((t) => t.name),
    ...operations.map((o) => o.tag),
  ].filter((tag, i, all) => all.indexOf(tag) === i && operations.some((o) => o.tag === tag));
  const tagDescriptions = new Map(
    ((document.tags as { name: string; description?: string }[] | undefined) ?? []).map((t) => [
      t.name,
      t.description,
    ]),
  );
  const schemas = Object.entries(
    (document.components?.schemas as Record<string, Schema> | undefined) ?? {},
  ).sort(([a], [b]) => a.localeCompare(b));
  const security = Object.entries(
    (document.components?.securitySchemes as Record<string, Schema> | undefined) ?? {},
  );
  const servers = (document.servers ?? []).map((s) => `<code>${escapeHtml(s.url)}</code>`).join(', ');

  const nav =
    `<strong>${escapeHtml(document.info.title)}</strong> <span class="muted">${escapeHtml(document.info.version)}</span>` +
    `<h2>Start</h2><ul><li><a href="#overview">Overview</a></li><li><a href="#authentication">Authentication</a></li>` +
    `<li><a href="#errors">Errors</a></li><li><a href="/openapi.json">openapi.json</a></li></ul>` +
    `<h2>Operations</h2><ul>${tagOrder.map((tag) => `<li><a href="#${anchor('tag', tag)}">${escapeHtml(tag)}</a></li>`).join('')}</ul>` +
    `<h2>Schemas</h2><ul>${schemas.map(([name]) => `<li><a href="#${anchor('schema', name)}">${escapeHtml(name)}</a></li>`).join('')}</ul>`;

  const body =
    `<h1 id="overview">${escapeHtml(document.info.title)} <span class="muted">${escapeHtml(document.info.version)}</span></h1>` +
    `${markdown(document.info.description)}` +
    (servers
      ? `<p><strong>Server:</strong> ${servers}. The machine-readable document is <a href="/openapi.json"><code>/openapi.json</code></a>.</p>`
      : '') +
    `<h2 id="authentication">Authentication</h2>` +
    (security.length > 0
      ? `<table><thead><tr><th>Scheme</th><th>How</th><th>Description</th></tr></thead><tbody>${security
          .map(
            ([name, s]) =>
              `<tr><td><code>${escapeHtml(name)}</code></td><td>${escapeHtml(
                s.type === 'apiKey'
                  ? `${String(s.in)} ${String(s.name)}`
                  : `${String(s.type)} ${String(s.scheme ?? '')}`,
              )}</td><td>${markdown(s.description as string | undefined)}</td></tr>`,
          )
          .join('')}</tbody></table>`
      : '<p>No credential.</p>') +
    `<p>Each operation lists the callers it accepts and the scopes an API key or agent token must hold.</p>` +
    `<h2 id="errors">Errors</h2><p>Every failure is an RFC 9457 problem (<code>application/problem+json</code>) with a stable ` +
    `<code>code</code>. Its <code>type</code> is <code>/docs/errors/&lt;code&gt;</code> on the service that answered: ` +
    `the page of each code says what it means and how to fix it.</p>${errorTable(codes)}` +
    tagOrder
      .map(
        (tag) =>
          `<h2 id="${anchor('tag', tag)}">${escapeHtml(tag)}</h2>${markdown(tagDescriptions.get(tag))}` +
          operations
            .filter((o) => o.tag === tag)
            .map((o) => operationHtml(document, o, codeSet))
            .join(''),
      )
      .join('') +
    `<h2 id="schemas">Schemas</h2>` +
    schemas
      .map(
        ([name, schema]) =>
          `<section id="${anchor('schema', name)}"><h3>${escapeHtml(name)}</h3>${schemaHtml(schema)}</section>`,
      )
      .join('');

  return page(`${document.info.title} reference`, nav, body);
}

function errorNav(serviceTitle: string, codes: readonly ProblemCodeDoc[]): string {
  return (
    `<strong>${escapeHtml(serviceTitle)}</strong><h2>Reference</h2><ul><li><a href="/docs">API reference</a></li>` +
    `<li><a href="/docs/errors">Error codes</a></li></ul><h2>Codes</h2><ul>` +
    codes.map((c) => `<li><a href="${problemTypeUrl(c.code)}">${escapeHtml(c.code)}</a></li>`).join('') +
    `</ul>`
  );
}

/** The list of every problem code. */
export function renderErrorIndex(serviceTitle: string, codes: readonly ProblemCodeDoc[]): string {
  return page(
    `Error codes — ${serviceTitle}`,
    errorNav(serviceTitle, codes),
    `<h1>Error codes</h1><p>Every failure of the API is a problem+json answer with a stable <code>code</code>; ` +
      `branch on it, never on <code>title</code> or <code>detail</code>.</p>${errorTable(codes)}`,
  );
}

/** The page of one problem code: what it means, how to fix it, what the answer looks like. */
export function renderErrorPage(
  serviceTitle: string,
  doc: ProblemCodeDoc,
  codes: readonly ProblemCodeDoc[],
): string {
  const example = {
    type: problemTypeUrl(doc.code),
    title: '…',
    status: doc.status[0],
    code: doc.code,
    detail: '…',
    request_id: 'req_…',
  };
  return page(
    `${doc.code} — ${serviceTitle}`,
    errorNav(serviceTitle, codes),
    `<h1><code>${escapeHtml(doc.code)}</code></h1>` +
      `<p class="muted">HTTP ${doc.status.join(' or ')}</p>` +
      `<h2>${escapeHtml(doc.title)}</h2>${markdown(doc.meaning)}` +
      `<h3>How to fix it</h3><div class="fix">${markdown(doc.fix)}</div>` +
      `<h3>The answer</h3><pre><code>${escapeHtml(JSON.stringify(example, null, 2))}</code></pre>` +
      `<p>Quote <code>request_id</code> when you report a problem. <code>type</code> is this page, relative to the ` +
      `service that answered.</p>`,
  );
}
