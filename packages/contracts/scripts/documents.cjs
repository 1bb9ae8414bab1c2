// The contract documents and the project's own rules for them. Plain CommonJS so the generator
// (an ES module script) and the jest suite share one definition.
const DOCUMENTS = [
  { key: 'hub', file: 'hub.yaml', visibility: 'public' },
  { key: 'hubInternal', file: 'hub-internal.yaml', visibility: 'internal' },
  { key: 'workflow', file: 'workflow.yaml', visibility: 'public' },
  { key: 'workflowWorker', file: 'workflow-worker.yaml', visibility: 'runtime' },
  { key: 'relay', file: 'relay.yaml', visibility: 'runtime' },
  { key: 'consoleRouter', file: 'console-router.yaml', visibility: 'runtime' },
  { key: 'agentConsole', file: 'agent-console.yaml', visibility: 'runtime' },
  { key: 'runtimeControl', file: 'runtime-control.yaml', visibility: 'runtime' },
];

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];
const ACTORS = new Set(['participant', 'api_key', 'agent', 'service', 'relay_token', 'anonymous']);
const ROLES = new Set(['owner', 'admin', 'member', 'viewer']);
const SCOPE_PATTERN = /^[a-z][a-z-]*:[a-z][a-z-]*$/;

/** Returns one message per broken rule; an empty list means every document is well annotated. */
function lintAnnotations(documents) {
  const problems = [];
  const seenOperationIds = new Map();
  for (const { key, visibility } of DOCUMENTS) {
    const doc = documents[key];
    if (!doc) {
      problems.push(`${key}: document missing`);
      continue;
    }
    if (typeof doc.openapi !== 'string' || !doc.openapi.startsWith('3.1.')) {
      problems.push(`${key}: openapi must be 3.1.x, found ${doc.openapi}`);
    }
    for (const [path, item] of Object.entries(doc.paths ?? {})) {
      const internalPath = path.startsWith('/internal/');
      if (visibility === 'internal' && !path.startsWith('/internal/v1/')) {
        problems.push(`${key}: ${path}: internal documents hold /internal/v1 paths only`);
      }
      if (visibility !== 'internal' && internalPath) {
        problems.push(`${key}: ${path}: internal paths belong in an internal document`);
      }
      for (const method of METHODS) {
        const op = item[method];
        if (!op) continue;
        const where = `${key}: ${method.toUpperCase()} ${path}`;
        if (typeof op.operationId !== 'string' || op.operationId.length === 0) {
          problems.push(`${where}: operationId missing`);
        } else if (seenOperationIds.has(op.operationId)) {
          problems.push(
            `${where}: operationId ${op.operationId} already used by ${seenOperationIds.get(op.operationId)}`,
          );
        } else {
          seenOperationIds.set(op.operationId, where);
        }
        const actors = op['x-svc-actors'];
        if (!Array.isArray(actors) || actors.length === 0) {
          problems.push(`${where}: x-svc-actors missing or empty`);
        } else {
          for (const actor of actors)
            if (!ACTORS.has(actor)) problems.push(`${where}: unknown actor ${actor}`);
          if (actors.includes('anonymous') && actors.length > 1) {
            problems.push(`${where}: anonymous cannot be combined with other actors`);
          }
          if (internalPath && actors.some((a) => a !== 'service')) {
            problems.push(`${where}: internal routes accept the service actor only`);
          }
        }
        const scopes = op['x-svc-scopes'];
        if (!Array.isArray(scopes)) {
          problems.push(`${where}: x-svc-scopes missing (use [] when none is needed)`);
        } else {
          for (const scope of scopes)
            if (!SCOPE_PATTERN.test(scope)) problems.push(`${where}: malformed scope ${scope}`);
          const scoped = Array.isArray(actors) && actors.some((a) => a === 'api_key' || a === 'agent');
          if (scoped && scopes.length === 0 && !op['x-svc-unscoped']) {
            problems.push(`${where}: api_key/agent actors need at least one scope`);
          }
        }
        const roles = op['x-svc-participant-roles'];
        if (roles !== undefined) {
          if (!Array.isArray(roles) || roles.length === 0 || roles.some((r) => !ROLES.has(r))) {
            problems.push(`${where}: x-svc-participant-roles must list roles among ${[...ROLES].join(', ')}`);
          }
          if (!Array.isArray(actors) || !actors.includes('participant')) {
            problems.push(`${where}: x-svc-participant-roles without the participant actor`);
          }
        }
      }
    }
  }
  return problems;
}

module.exports = { DOCUMENTS, METHODS, lintAnnotations };
