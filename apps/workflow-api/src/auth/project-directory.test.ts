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

  test('when many requests miss at once, then the hub is asked once and all get its answer', async () => {
    let calls = 0;
    let answer: (value: unknown) => void = () => undefined;
    const hub = {
      GET: () => {
        calls += 1;
        return new Promise((resolve) => (answer = resolve));
      },
    } as unknown as HubInternalClient;
    const directory = createProjectDirectory({ hub });
    const finds = Array.from({ length: 20 }, () => directory.find('prj_1'));
    answer({
      response: new Response(null, { status: 200 }),
      data: { data: { id: 'prj_1', code: 'P1', name: 'One', workspace: { id: 'ws_1', slug: 'one' } } },
    });
    const found = await Promise.all(finds);
    expect(calls).toBe(1);
    expect(new Set(found.map((p) => p?.code))).toEqual(new Set(['P1']));
    // Answered from the cache afterwards; a failed question is not remembered.
    await directory.find('prj_1');
    expect(calls).toBe(1);
  });

  test('when the shared question fails, then every waiting request gets the 503 and the next one asks again', async () => {
    let calls = 0;
    const hub = {
      GET: async () => {
        calls += 1;
        throw new Error('connect ECONNREFUSED');
      },
    } as unknown as HubInternalClient;
    const directory = createProjectDirectory({ hub });
    const results = await Promise.allSettled([directory.find('prj_1'), directory.find('prj_1')]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(calls).toBe(1);
    await expect(directory.find('prj_1')).rejects.toMatchObject({ code: 'hub_unavailable' });
    expect(calls).toBe(2);
  });
});
