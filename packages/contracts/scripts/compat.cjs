#!/usr/bin/env node
// Compatibility guard for the public contract (service spec, Versioning 2–3): compares the public documents
// (hub.yaml and workflow.yaml with their fragments and the shared components) with the last released snapshot
// in `released/<version>/`, and fails on a breaking change (a removed operation, field or enum value, a newly
// required field, a narrowed type…) unless CHANGELOG.md carries a deprecation entry for it that is at least
// 90 days old. The documents are assembled by documents-assembly.cjs and compared by api-smart-diff; this file
// only applies the project's two rules on enums and matches breaking changes with deprecation entries.
//
//   node packages/contracts/scripts/compat.cjs            check (exit 1 on an uncovered breaking change)
//   node packages/contracts/scripts/compat.cjs --release  write the current documents as a new snapshot
//                                                         (released/<info.version>/), e.g. when releasing
const { existsSync, readFileSync, readdirSync, mkdirSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { apiCompare } = require('api-smart-diff');
const { DOCUMENTS, METHODS } = require('./documents.cjs');
const { OPENAPI_DIR, publicDocuments } = require('./documents-assembly.cjs');

const CONTRACTS_DIR = join(__dirname, '..');
const REPO_DIR = join(CONTRACTS_DIR, '..', '..');
const RELEASED_DIR = join(CONTRACTS_DIR, 'released');
const CHANGELOG = join(REPO_DIR, 'CHANGELOG.md');
/** The public documents: what partners build on. Internal and runtime documents are not covered. */
const PUBLIC_DOCUMENTS = DOCUMENTS.filter((d) => d.visibility === 'public').map((d) => d.key);
const NOTICE_DAYS = 90;
const DAY_MS = 24 * 60 * 60 * 1000;

function compareVersions(a, b) {
  const pa = a.split(/[.-]/).map((p) => (/^\d+$/.test(p) ? Number(p) : p));
  const pb = b.split(/[.-]/).map((p) => (/^\d+$/.test(p) ? Number(p) : p));
  for (let i = 0; i < Math.max(pa.length, pb.length); i += 1) {
    if (pa[i] === pb[i]) continue;
    if (pa[i] === undefined) return -1;
    if (pb[i] === undefined) return 1;
    return typeof pa[i] === 'number' && typeof pb[i] === 'number'
      ? pa[i] - pb[i]
      : String(pa[i]) < String(pb[i])
        ? -1
        : 1;
  }
  return 0;
}

/** The newest snapshot in `released/`: `{ version, documents }`, or undefined when there is none. */
function latestRelease(releasedDir = RELEASED_DIR) {
  if (!existsSync(releasedDir)) return undefined;
  const versions = readdirSync(releasedDir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && /^\d+\.\d+\.\d+/.test(e.name))
    .map((e) => e.name)
    .sort(compareVersions);
  const version = versions.at(-1);
  if (!version) return undefined;
  const documents = {};
  for (const key of PUBLIC_DOCUMENTS) {
    documents[key] = JSON.parse(readFileSync(join(releasedDir, version, `${key}.json`), 'utf8'));
  }
  return { version, documents };
}

/**
 * Deprecation entries of the changelog: list items under a `### Deprecated` heading that start with a date
 * (`- 2026-03-01: …`); every backticked subject in the item is deprecated from that date. A subject is an
 * operation (`` `DELETE /api/v1/things/{id}` ``), a schema (`` `Thing` ``), a field of one
 * (`` `Thing.colour` ``, nested `` `Thing.size.unit` ``) or an enum value (`` `Thing.state=archived` ``).
 */
function readDeprecations(changelogText) {
  const entries = [];
  let inDeprecated = false;
  for (const line of changelogText.split(/\r?\n/)) {
    const heading = /^(#{2,4})\s+(.*)$/.exec(line);
    if (heading) {
      inDeprecated = heading[1] === '###' && /^deprecated\b/i.test(heading[2].trim());
      continue;
    }
    if (!inDeprecated) continue;
    const item = /^\s*[-*]\s+\**(\d{4}-\d{2}-\d{2})\**\s*[:—–-]?\s*(.*)$/.exec(line);
    if (!item) continue;
    const date = new Date(`${item[1]}T00:00:00Z`);
    if (Number.isNaN(date.getTime())) continue;
    for (const match of item[2].matchAll(/`([^`]+)`/g)) {
      const subject = parseSubject(match[1].trim());
      if (subject) entries.push({ date: item[1], since: date, subject, text: match[1].trim() });
    }
  }
  return entries;
}

function parseSubject(text) {
  const operation = /^(GET|PUT|POST|DELETE|PATCH|HEAD|OPTIONS|TRACE)\s+(\/\S*)$/i.exec(text);
  if (operation) return { kind: 'operation', method: operation[1].toLowerCase(), path: operation[2] };
  if (/^[A-Za-z_][\w-]*(\.[\w-]+)*(=.+)?$/.test(text)) return { kind: 'schema', chain: text };
  return undefined;
}

const STRUCTURAL = new Set([
  'properties',
  'items',
  'additionalProperties',
  'allOf',
  'oneOf',
  'anyOf',
  'not',
  'schema',
]);

/** `Name.field.sub` (and `=value` for an enum value, `field` for a required entry) of a component diff. */
function schemaChain(diff) {
  const [, , name, ...rest] = diff.path;
  const parts = [name];
  for (let i = 0; i < rest.length; i += 1) {
    const seg = rest[i];
    const value = diff.before !== undefined ? diff.before : diff.after;
    if ((seg === 'enum' || seg === 'required') && i === rest.length - 2) {
      if (seg === 'required') parts.push(String(value));
      else parts[parts.length - 1] += `=${typeof value === 'string' ? value : JSON.stringify(value)}`;
      break;
    }
    if (STRUCTURAL.has(String(seg)) || typeof seg === 'number' || /^\d+$/.test(String(seg))) continue;
    parts.push(String(seg));
  }
  return parts.join('.');
}

/** The diff path with the index of a `required` or `enum` item replaced by its value (order is not meaning). */
function normalizedPath(diff) {
  const path = diff.path.map(String);
  const value = diff.before !== undefined ? diff.before : diff.after;
  if (path.length >= 2 && ['enum', 'required'].includes(path[path.length - 2])) {
    path[path.length - 1] = `=${JSON.stringify(value)}`;
  }
  return path;
}

function isEnumItem(diff) {
  return diff.path.length >= 2 && diff.path[diff.path.length - 2] === 'enum';
}

/**
 * The project's classification: api-smart-diff's, except that an added enum value is additive (clients are
 * told to accept values they do not know), and a removed enum value or property is breaking wherever it was
 * (requests or responses: a client may send it or read it).
 */
function isBreaking(diff, before) {
  if (isEnumItem(diff) && diff.action === 'add') {
    // A value added to an existing enum widens it. The first `enum` of a free value narrows it: breaking
    // where the client sends it (a request body or a parameter), harmless in an answer.
    const schema = valueAt(before, diff.path.slice(0, -2));
    const narrowed = !(schema && typeof schema === 'object' && Array.isArray(schema.enum));
    return (
      narrowed &&
      diff.path[0] === 'paths' &&
      diff.path.some((seg) => seg === 'requestBody' || seg === 'parameters')
    );
  }
  if (isEnumItem(diff) && diff.action === 'remove') return true;
  if (isRemovedProperty(diff)) return true;
  if (isAddedAnswerField(diff)) return false;
  return diff.type === 'breaking';
}

/**
 * A property (or its `required` entry) added where only answers use it: additive, like an enum value. api-smart-diff
 * judges a component alone, without knowing whether a request uses it, and misjudges a response component that
 * a GET and a PATCH share; it repeats every component change under each operation using it, where a request's
 * new field is still judged (and breaking when required).
 */
function isAddedAnswerField(diff) {
  if (diff.action !== 'add' || diff.path.length < 2) return false;
  const kind = diff.path[diff.path.length - 2];
  if (kind !== 'properties' && kind !== 'required') return false;
  if (diff.path[0] === 'components') return diff.path[1] === 'schemas' || diff.path[1] === 'responses';
  return diff.path[0] === 'paths' && diff.path.includes('responses') && !diff.path.includes('requestBody');
}

/** The value at `path` in a document, following local `$ref`s on the way (as api-smart-diff resolves them). */
function valueAt(doc, path) {
  const deref = (node) => {
    for (let hops = 0; node && typeof node === 'object' && typeof node.$ref === 'string'; hops += 1) {
      if (hops > 20 || !node.$ref.startsWith('#/')) return undefined;
      node = node.$ref
        .slice(2)
        .split('/')
        .reduce((at, key) => (at ? at[key.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined), doc);
    }
    return node;
  };
  let node = deref(doc);
  for (const seg of path) {
    if (!node || typeof node !== 'object') return undefined;
    node = deref(node[seg]);
  }
  return node;
}

/** A property removed from a schema: breaking in a response (clients read it) and in a request (closed schemas refuse it). */
function isRemovedProperty(diff) {
  return (
    diff.action === 'remove' && diff.path.length >= 2 && diff.path[diff.path.length - 2] === 'properties'
  );
}

function endsWith(long, tail) {
  if (tail.length === 0 || tail.length > long.length) return false;
  return tail.every((seg, i) => long[long.length - tail.length + i] === seg);
}

/**
 * Breaking changes between two documents, each with the deprecation entry that allows it (if any).
 * api-smart-diff resolves `$ref`s, so one component change also appears under every operation and every
 * other component that uses it: an entry for a schema (`Thing.colour`) covers the change made in that
 * component and each repetition of it elsewhere (same change, same tail of the path). An entry for an
 * operation covers every change under that operation.
 */
function breakingChanges(before, after, deprecations, now) {
  // api-smart-diff normalizes the documents it is given in place (e.g. an empty `enum`): give it copies.
  const { diffs } = apiCompare(structuredClone(before), structuredClone(after));
  const breaking = diffs.filter((diff) => isBreaking(diff, before));
  const sameChange = (a, b) =>
    a.action === b.action &&
    JSON.stringify(a.before) === JSON.stringify(b.before) &&
    JSON.stringify(a.after) === JSON.stringify(b.after);
  const coversChain = (subject, chain) =>
    chain === subject || chain.startsWith(`${subject}.`) || chain.startsWith(`${subject}=`);
  // Each schema entry with the component changes it names directly (its anchors).
  const schemaEntries = deprecations
    .filter((e) => e.subject.kind === 'schema')
    .map((entry) => ({
      entry,
      anchors: diffs
        .filter((d) => d.path[0] === 'components' && coversChain(entry.subject.chain, schemaChain(d)))
        .map((d) => ({ diff: d, tail: normalizedPath(d).slice(3) })),
    }));
  const operationEntry = (path, method) =>
    deprecations.find(
      (e) => e.subject.kind === 'operation' && e.subject.path === path && e.subject.method === method,
    );
  const oldEnough = (entry) => now.getTime() - entry.since.getTime() >= NOTICE_DAYS * DAY_MS;

  return breaking.map((diff) => {
    const where = diff.path.join('.');
    let entry;
    if (diff.path[0] === 'paths') {
      const [, path, method] = diff.path.map(String);
      if (METHODS.includes(method)) entry = operationEntry(path, method);
      else if (diff.path.length === 2) {
        // A whole path removed: each of its operations needs its own entry; the youngest one decides.
        const found = METHODS.filter((m) => diff.before && diff.before[m]).map((m) =>
          operationEntry(path, m),
        );
        if (found.length > 0 && found.every(Boolean)) entry = found.sort((a, b) => b.since - a.since)[0];
      }
    }
    if (!entry) {
      const path = normalizedPath(diff);
      const match = schemaEntries.find(({ anchors }) =>
        anchors.some((a) => a.diff === diff || (sameChange(a.diff, diff) && endsWith(path, a.tail))),
      );
      entry = match?.entry;
    }
    return {
      action: diff.action,
      where,
      description: diff.description ?? `${diff.action} ${where}`,
      deprecation: entry ? { date: entry.date, subject: entry.text } : undefined,
      allowed: entry !== undefined && oldEnough(entry),
    };
  });
}

/**
 * Compares every public document with its released snapshot. Returns `{ ok, release, changes }`, where
 * `changes` lists each breaking change with the document it is in and whether a deprecation allows it.
 */
function checkCompatibility({ released, current, changelog, now = new Date() }) {
  const deprecations = readDeprecations(changelog);
  const changes = [];
  for (const key of PUBLIC_DOCUMENTS) {
    if (!released.documents[key]) continue;
    if (!current[key]) {
      changes.push({
        document: key,
        action: 'remove',
        where: '(document)',
        description: `${key} document removed`,
        allowed: false,
      });
      continue;
    }
    for (const change of breakingChanges(released.documents[key], current[key], deprecations, now)) {
      changes.push({ document: key, ...change });
    }
  }
  return { ok: changes.every((c) => c.allowed), release: released.version, changes };
}

function formatReport(result) {
  const lines = [];
  const blocked = result.changes.filter((c) => !c.allowed);
  const allowed = result.changes.filter((c) => c.allowed);
  if (result.ok) {
    lines.push(
      `contracts compatible with release ${result.release}` +
        (allowed.length > 0
          ? ` (${allowed.length} breaking change(s) past their ${NOTICE_DAYS}-day deprecation)`
          : ''),
    );
  } else {
    lines.push(`contracts: ${blocked.length} breaking change(s) since release ${result.release}:`);
    for (const c of blocked) {
      const why = c.deprecation
        ? `deprecated on ${c.deprecation.date} (\`${c.deprecation.subject}\`), less than ${NOTICE_DAYS} days ago`
        : 'no deprecation entry in CHANGELOG.md';
      lines.push(`  ${c.document}: ${c.description} [${c.where}] — ${why}`);
    }
    lines.push(
      `Keep the old shape (add instead of changing), or record the deprecation under "### Deprecated" in ` +
        `CHANGELOG.md (\`- YYYY-MM-DD: \\\`METHOD /path\\\`\` or \`\\\`Schema.field\\\`\`) and remove it ${NOTICE_DAYS} days later.`,
    );
  }
  return lines.join('\n');
}

/** Writes the current documents as the snapshot of `version` (default: the documents' `info.version`). */
function writeRelease(version, { openapiDir = OPENAPI_DIR, releasedDir = RELEASED_DIR } = {}) {
  const documents = publicDocuments(openapiDir);
  const v = version ?? documents.workflow.info.version;
  mkdirSync(join(releasedDir, v), { recursive: true });
  for (const [key, doc] of Object.entries(documents)) {
    writeFileSync(join(releasedDir, v, `${key}.json`), `${JSON.stringify(doc, null, 2)}\n`);
  }
  return v;
}

function main(argv) {
  if (argv.includes('--release')) {
    const version = argv[argv.indexOf('--release') + 1];
    const written = writeRelease(version && !version.startsWith('-') ? version : undefined);
    console.log(`released snapshot written: packages/contracts/released/${written}/`);
    return 0;
  }
  const released = latestRelease();
  if (!released) {
    console.error('no released snapshot in packages/contracts/released/ (create one with --release)');
    return 1;
  }
  const result = checkCompatibility({
    released,
    current: publicDocuments(),
    changelog: existsSync(CHANGELOG) ? readFileSync(CHANGELOG, 'utf8') : '',
  });
  const report = formatReport(result);
  if (result.ok) console.log(report);
  else console.error(report);
  return result.ok ? 0 : 1;
}

module.exports = {
  NOTICE_DAYS,
  PUBLIC_DOCUMENTS,
  currentDocuments: publicDocuments,
  latestRelease,
  readDeprecations,
  checkCompatibility,
  formatReport,
  writeRelease,
};

if (require.main === module) process.exitCode = main(process.argv.slice(2));
