import type { OpenApiDocument } from '@svc/contracts';
import { buildIntegrationContract } from './integration-contract';

const op = (extra: Record<string, unknown> = {}) => ({ operationId: 'x', responses: {}, ...extra });

describe('integration contract', () => {
  const hub: OpenApiDocument = {
    openapi: '3.1.0',
    info: { title: 'Hub', version: '1.0.0' },
    security: [{ key: [] }],
    paths: {
      '/api/v1/a': { get: op({ operationId: 'a', example: { secret: 1 } }) },
      '/api/v1/app-only': { get: op({ operationId: 'b', 'x-svc-visibility': 'app' }) },
      '/healthz': { get: op({ operationId: 'h' }) },
    },
    components: {
      schemas: { Same: { type: 'string' }, Thing: { type: 'string' } },
      securitySchemes: { key: { type: 'apiKey', in: 'header', name: 'x-api-key' } },
    },
  };
  const workflow: OpenApiDocument = {
    openapi: '3.1.0',
    info: { title: 'Workflow', version: '2.0.0' },
    security: [{ key: [] }],
    paths: {
      '/api/v1/projects/{id}/workflow/w': {
        post: op({
          operationId: 'w',
          requestBody: {
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } },
          },
        }),
      },
    },
    components: {
      schemas: { Same: { type: 'string' }, Thing: { type: 'integer' } },
      securitySchemes: { key: { type: 'apiKey', in: 'header', name: 'x-workflow-key' } },
    },
  };
  const doc = buildIntegrationContract({ hub, workflow, hubUrl: 'http://hub', workflowUrl: 'http://wf' });
  const paths = doc.paths as Record<string, Record<string, Record<string, unknown>>>;

  test('when documents merge, then app-only, system and internal routes are left out and examples removed', () => {
    expect(Object.keys(paths).sort()).toEqual(['/api/v1/a', '/api/v1/projects/{id}/workflow/w']);
    expect(JSON.stringify(doc)).not.toContain('example');
  });

  test('when each path is read, then it names the server it is served from', () => {
    expect(paths['/api/v1/a']?.servers).toEqual([{ url: 'http://hub' }]);
    expect(paths['/api/v1/projects/{id}/workflow/w']?.servers).toEqual([{ url: 'http://wf' }]);
  });

  test('when a component differs between documents, then the workflow one is renamed and its references and security follow', () => {
    const schemas = doc.components?.schemas as Record<string, unknown>;
    expect(schemas.Same).toEqual({ type: 'string' });
    expect(schemas.Thing).toEqual({ type: 'string' });
    expect(schemas.WorkflowThing).toEqual({ type: 'integer' });
    const post = paths['/api/v1/projects/{id}/workflow/w']?.post as Record<string, unknown>;
    expect(JSON.stringify(post.requestBody)).toContain('#/components/schemas/WorkflowThing');
    expect(post.security).toEqual([{ WorkflowKey: [] }]);
    expect((doc.components?.securitySchemes as Record<string, unknown>).WorkflowKey).toBeDefined();
  });
});
