import type { HubInternalClient } from '@svc/contracts';
import { createProjectDirectory } from './project-directory';

/** The hub's project lookup answering with this status and problem code. */
function hubAnswering(status: number, code?: string): HubInternalClient {
  return {
    GET: async () => ({
      response: new Response(null, { status }),
      ...(code ? { error: { code } } : {}),
    }),
  } as unknown as HubInternalClient;
}

describe('project directory', () => {
  test('when the hub does not know the project, then it is not found', async () => {
    await expect(
      createProjectDirectory({ hub: hubAnswering(404, 'project_not_found') }).find('prj_x'),
    ).resolves.toBeNull();
  });

  test('when the hub refuses the id as malformed, then it names no project (not an unreachable hub)', async () => {
    const directory = createProjectDirectory({ hub: hubAnswering(400, 'validation_failed') });
    await expect(directory.find('4-_-m_--2Vv0')).resolves.toBeNull();
  });

  test('when the hub answers anything else without a project, then the hub is unavailable (503)', async () => {
    await expect(
      createProjectDirectory({ hub: hubAnswering(500, 'internal_error') }).find('prj_x'),
    ).rejects.toMatchObject({ status: 503, code: 'hub_unavailable' });
    await expect(
      createProjectDirectory({ hub: hubAnswering(400, 'text_invalid') }).find('prj_x'),
    ).rejects.toMatchObject({
      status: 503,
      code: 'hub_unavailable',
    });
  });
});
