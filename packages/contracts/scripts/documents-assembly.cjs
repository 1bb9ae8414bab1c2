// Assembles the contract documents from their YAML sources: the one way every tool reads them (the generator,
// the compatibility guard and the SDK's generator, which reaches it as `@svc/contracts/documents-assembly`).
const { existsSync, readFileSync, readdirSync } = require('node:fs');
const { join } = require('node:path');
const { parse } = require('yaml');
const { DOCUMENTS } = require('./documents.cjs');

const OPENAPI_DIR = join(__dirname, '..', 'openapi');

function readYaml(path) {
  return parse(readFileSync(path, 'utf8')) ?? {};
}

/**
 * One document as served: `<name>.yaml`, then the fragments in `<name>/*.yaml` in name order (each holding the
 * `paths`, `components` and `tags` of one resource group), then the components of `shared.yaml` under the
 * document's own. A path or component defined twice is an error.
 */
function assembleDocument(file, openapiDir = OPENAPI_DIR) {
  const doc = readYaml(join(openapiDir, file));
  const dir = join(openapiDir, file.replace(/\.yaml$/, ''));
  if (existsSync(dir)) {
    for (const name of readdirSync(dir)
      .filter((f) => f.endsWith('.yaml'))
      .sort()) {
      const fragment = readYaml(join(dir, name));
      for (const [path, item] of Object.entries(fragment.paths ?? {})) {
        doc.paths ??= {};
        if (doc.paths[path]) throw new Error(`${file}: path ${path} of ${name} is defined twice`);
        doc.paths[path] = item;
      }
      for (const [section, entries] of Object.entries(fragment.components ?? {})) {
        doc.components ??= {};
        doc.components[section] ??= {};
        for (const [key, value] of Object.entries(entries)) {
          if (doc.components[section][key])
            throw new Error(`${file}: component ${section}.${key} of ${name} is defined twice`);
          doc.components[section][key] = value;
        }
      }
      if (fragment.tags) doc.tags = [...(doc.tags ?? []), ...fragment.tags];
    }
  }
  const shared = readYaml(join(openapiDir, 'shared.yaml'));
  doc.components ??= {};
  for (const [section, entries] of Object.entries(shared.components ?? {})) {
    doc.components[section] = { ...entries, ...(doc.components[section] ?? {}) };
  }
  return doc;
}

/** What partners build on: the public documents, by key. An internal path in one of them is an error. */
function publicDocuments(openapiDir = OPENAPI_DIR) {
  const documents = {};
  for (const { key, file } of DOCUMENTS.filter((d) => d.visibility === 'public')) {
    const doc = assembleDocument(file, openapiDir);
    for (const path of Object.keys(doc.paths ?? {})) {
      if (path.startsWith('/internal/'))
        throw new Error(`${file}: internal path ${path} in a public document`);
    }
    documents[key] = doc;
  }
  return documents;
}

module.exports = { OPENAPI_DIR, assembleDocument, publicDocuments };
