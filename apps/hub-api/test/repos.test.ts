import { ALL_SCOPES } from '@svc/auth';
import { unwrap } from '@svc/contracts';
import { createKey, startTestHub } from './support/harness';
import type { SeededMember, TestHub } from './support/harness';
import { ecPemKey, githubPat, openSshKey, rsaPemKey } from './support/repo-keys';

let t: TestHub;
beforeAll(async () => {
  t = await startTestHub();
});
afterAll(() => t.close());

async function createRepo(member: SeededMember, name = `repo-${Math.random().toString(36).slice(2, 8)}`) {
  return unwrap(
    await t.client({ token: member.token }).POST('/api/v1/workspaces/{workspace}/repos', {
      params: { path: { workspace: member.workspace.slug } },
      body: { name, url: `https://github.com/example/${name}.git` },
    }),
  );
}

function putCredential(
  token: { token?: string; apiKey?: string },
  repoId: string,
  kind: 'pat' | 'deploy_key',
  secret: string,
) {
  return t.client(token).PUT('/api/v1/repos/{repoId}/credentials', {
    params: { path: { repoId } },
    body: { kind, secret },
  });
}

/** Every place a secret could leak to: the responses given, the log lines and the audit rows. */
async function expectNowhere(secret: string, responses: unknown[]) {
  for (const body of responses) expect(JSON.stringify(body)).not.toContain(secret);
  expect(t.logs.join('\n')).not.toContain(secret);
  const audit = await t.database.prisma.auditEvent.findMany();
  expect(JSON.stringify(audit)).not.toContain(secret);
}

describe('repos', () => {
  test('when a member registers a repo, then it is listed and readable by id, without a credential', async () => {
    const member = await t.seedMember('member');
    const api = t.client({ token: member.token });
    const created = unwrap(
      await api.POST('/api/v1/workspaces/{workspace}/repos', {
        params: { path: { workspace: member.workspace.slug } },
        body: { name: 'platform', url: 'git@github.com:example/platform.git' },
      }),
    );
    expect(created).toMatchObject({
      name: 'platform',
      url: 'git@github.com:example/platform.git',
      workspace_id: member.workspace.id,
      credential: null,
    });
    const list = unwrap(
      await api.GET('/api/v1/workspaces/{workspace}/repos', {
        params: { path: { workspace: member.workspace.id } },
      }),
    );
    expect(list.map((r) => r.id)).toEqual([created.id]);
    const one = unwrap(await api.GET('/api/v1/repos/{repoId}', { params: { path: { repoId: created.id } } }));
    expect(one.url).toBe('git@github.com:example/platform.git');
    const event = await t.database.prisma.auditEvent.findFirstOrThrow({ where: { targetId: created.id } });
    expect(event.action).toBe('repo.created');
  });

  test('when a key with repos:write registers repos, then it works; a taken name is 409', async () => {
    const admin = await t.seedMember('admin');
    const key = await createKey(t, admin, { scopes: ['repos:write', 'repos:read'] });
    const api = t.client({ apiKey: key.key });
    const params = { path: { workspace: admin.workspace.slug } };
    const first = await api.POST('/api/v1/workspaces/{workspace}/repos', {
      params,
      body: { name: 'svc', url: 'ssh://git@git.example.test:2222/team/svc.git' },
    });
    expect(first.response.status).toBe(201);
    const dup = await api.POST('/api/v1/workspaces/{workspace}/repos', {
      params,
      body: { name: 'svc', url: 'https://git.example.test/team/svc.git' },
    });
    expect({ status: dup.response.status, code: dup.error?.code }).toEqual({
      status: 409,
      code: 'repo_name_taken',
    });
  });

  test('when the url is not an https or SSH git URL, or carries credentials, then 400 repo_url_invalid without echoing it', async () => {
    const member = await t.seedMember('member');
    const token = githubPat();
    const post = (url: string) =>
      t.client({ token: member.token }).POST('/api/v1/workspaces/{workspace}/repos', {
        params: { path: { workspace: member.workspace.slug } },
        body: { name: 'bad', url },
      });
    for (const url of [
      'http://github.com/example/repo.git',
      `https://${token}@github.com/example/repo.git`,
      `https://user:${token}@github.com/example/repo.git`,
      `ssh://git:${token}@github.com/example/repo.git`,
      'file:///srv/repos/repo.git',
      '/srv/repos/repo.git',
      'ftp://example.test/repo.git',
      'https://github.com/',
      'https://github.com/example/repo.git?token=x',
      'git@github.com:',
      'git@bad_host!:example/repo.git',
      'https://github.com/example/my repo.git',
    ]) {
      const res = await post(url);
      expect({ url, status: res.response.status, code: res.error?.code }).toEqual({
        url,
        status: 400,
        code: 'repo_url_invalid',
      });
      expect(JSON.stringify(res.error)).not.toContain(token);
    }
    await expectNowhere(token, []);
    expect(await t.database.prisma.repo.count({ where: { workspaceId: member.workspace.id } })).toBe(0);
  });

  test('when a viewer or a read-only key registers a repo, then 403; both may read', async () => {
    const owner = await t.seedMember('owner');
    const viewer = await t.seedMember('viewer', owner.workspace);
    const readOnly = await createKey(t, owner, { preset: 'read-only' });
    const params = { path: { workspace: owner.workspace.slug } };
    const body = { name: 'x', url: 'https://github.com/example/x.git' };
    const byViewer = await t
      .client({ token: viewer.token })
      .POST('/api/v1/workspaces/{workspace}/repos', { params, body });
    expect(byViewer.error?.code).toBe('role_forbidden');
    const byKey = await t
      .client({ apiKey: readOnly.key })
      .POST('/api/v1/workspaces/{workspace}/repos', { params, body });
    expect(byKey.error).toMatchObject({ code: 'scope_missing', missing_scopes: ['repos:write'] });
    const repo = await createRepo(owner);
    const read = await t
      .client({ apiKey: readOnly.key })
      .GET('/api/v1/repos/{repoId}', { params: { path: { repoId: repo.id } } });
    expect(read.response.status).toBe(200);
    const list = await t
      .client({ token: viewer.token })
      .GET('/api/v1/workspaces/{workspace}/repos', { params });
    expect(list.data?.data.map((r) => r.id)).toEqual([repo.id]);
  });

  test("when someone reads another workspace's repo by id, then it is not found", async () => {
    const a = await t.seedMember('owner');
    const b = await t.seedMember('owner');
    const repo = await createRepo(a);
    const byParticipant = await t
      .client({ token: b.token })
      .GET('/api/v1/repos/{repoId}', { params: { path: { repoId: repo.id } } });
    expect({ status: byParticipant.response.status, code: byParticipant.error?.code }).toEqual({
      status: 404,
      code: 'repo_not_found',
    });
    const keyB = await createKey(t, b, { preset: 'read-only' });
    const byKey = await t
      .client({ apiKey: keyB.key })
      .GET('/api/v1/repos/{repoId}', { params: { path: { repoId: repo.id } } });
    expect(byKey.response.status).toBe(404);
  });
});

describe('PUT /api/v1/repos/{repoId}/credentials', () => {
  test('when an agent sets a repo credential, then 403 and nothing is stored', async () => {
    const member = await t.seedMember('member');
    const repo = await createRepo(member);
    const agent = await t.seedAgent(member.workspace.id);
    const secret = githubPat();
    const res = await putCredential({ token: agent.token }, repo.id, 'pat', secret);
    expect({ status: res.response.status, code: res.error?.code }).toEqual({
      status: 403,
      code: 'actor_not_allowed',
    });
    expect(await t.database.prisma.repoCredential.count({ where: { repoId: repo.id } })).toBe(0);
    await expectNowhere(secret, [res.error]);
  });

  test('when an API key — even one holding every scope — sets a repo credential, then 403: keys have no participant identity', async () => {
    const owner = await t.seedMember('owner');
    const repo = await createRepo(owner);
    const key = await createKey(t, owner, { scopes: [...ALL_SCOPES] });
    const secret = githubPat();
    const res = await putCredential({ apiKey: key.key }, repo.id, 'pat', secret);
    expect({ status: res.response.status, code: res.error?.code }).toEqual({
      status: 403,
      code: 'actor_not_allowed',
    });
    expect(await t.database.prisma.repoCredential.count({ where: { repoId: repo.id } })).toBe(0);
    await expectNowhere(secret, [res.error]);
  });

  test('when a member sets a PAT, then the repo shows kind and fingerprint only, and the secret is sealed, never returned, logged or audited', async () => {
    const member = await t.seedMember('member');
    const repo = await createRepo(member);
    const secret = githubPat();
    const res = await putCredential({ token: member.token }, repo.id, 'pat', secret);
    expect(res.response.status).toBe(200);
    const expectedFingerprint = (await import('node:crypto'))
      .createHash('sha256')
      .update(secret)
      .digest('hex')
      .slice(0, 12);
    expect(res.data?.data.credential).toEqual({
      kind: 'pat',
      fingerprint: expectedFingerprint,
      set_at: expect.any(String),
      rotated_at: null,
    });

    const row = await t.database.prisma.repoCredential.findUniqueOrThrow({ where: { repoId: repo.id } });
    expect(row.secretCiphertext).not.toBe(secret);
    expect(row.secretCiphertext).not.toContain(secret);
    expect(row.secretCiphertext.startsWith('v1.k1.')).toBe(true);
    expect(t.hub.deps.box.open(row.secretCiphertext, repo.id)).toBe(secret);
    // Bound to its repo: the ciphertext does not open as another repo's credential.
    expect(() => t.hub.deps.box.open(row.secretCiphertext, 'rep_other')).toThrow();
    expect(row.setById).toBe(member.participantId);

    const api = t.client({ token: member.token });
    const read = await api.GET('/api/v1/repos/{repoId}', { params: { path: { repoId: repo.id } } });
    const list = await api.GET('/api/v1/workspaces/{workspace}/repos', {
      params: { path: { workspace: member.workspace.slug } },
    });
    expect(read.data?.data.credential?.fingerprint).toBe(expectedFingerprint);
    await expectNowhere(secret, [res.data, read.data, list.data]);

    const event = await t.database.prisma.auditEvent.findFirstOrThrow({
      where: { targetId: repo.id, action: 'credential.repo.set' },
    });
    expect(event).toMatchObject({ actorKind: 'participant', actorId: member.participantId });
    expect(event.data).toEqual({ kind: 'pat', fingerprint: expectedFingerprint });
  });

  test('when the credential is set again, then it rotates: set_at stays, rotated_at moves, the old secret is gone', async () => {
    const owner = await t.seedMember('owner');
    const repo = await createRepo(owner);
    const oldSecret = githubPat();
    const first = unwrap(await putCredential({ token: owner.token }, repo.id, 'pat', oldSecret));
    const admin = await t.seedMember('admin', owner.workspace);
    const deployKey = openSshKey();
    const second = unwrap(await putCredential({ token: admin.token }, repo.id, 'deploy_key', deployKey));
    expect(second.credential).toMatchObject({ kind: 'deploy_key', set_at: first.credential?.set_at });
    expect(second.credential?.rotated_at).not.toBeNull();
    expect(second.credential?.fingerprint).not.toBe(first.credential?.fingerprint);

    const row = await t.database.prisma.repoCredential.findUniqueOrThrow({ where: { repoId: repo.id } });
    expect(t.hub.deps.box.open(row.secretCiphertext, repo.id)).toBe(deployKey);
    expect(row.setById).toBe(admin.participantId);
    const rotated = await t.database.prisma.auditEvent.findFirstOrThrow({
      where: { targetId: repo.id, action: 'credential.repo.rotated' },
    });
    expect(rotated.data).toEqual({
      kind: 'deploy_key',
      fingerprint: second.credential?.fingerprint,
      previous_kind: 'pat',
      previous_fingerprint: first.credential?.fingerprint,
    });
    await expectNowhere(oldSecret, [first, second]);
    await expectNowhere(deployKey.split('\n')[1] as string, [first, second]);
  });

  test('when a viewer sets a credential, then 403 role_forbidden; a participant of another workspace gets 404', async () => {
    const owner = await t.seedMember('owner');
    const repo = await createRepo(owner);
    const viewer = await t.seedMember('viewer', owner.workspace);
    const stranger = await t.seedMember('owner');
    const byViewer = await putCredential({ token: viewer.token }, repo.id, 'pat', githubPat());
    expect({ status: byViewer.response.status, code: byViewer.error?.code }).toEqual({
      status: 403,
      code: 'role_forbidden',
    });
    const byStranger = await putCredential({ token: stranger.token }, repo.id, 'pat', githubPat());
    expect({ status: byStranger.response.status, code: byStranger.error?.code }).toEqual({
      status: 404,
      code: 'repo_not_found',
    });
    expect(await t.database.prisma.repoCredential.count({ where: { repoId: repo.id } })).toBe(0);
  });

  test('when a PAT or deploy key has the wrong shape, then 400 repo_credential_invalid, nothing stored, nothing echoed', async () => {
    const member = await t.seedMember('member');
    const repo = await createRepo(member);
    const cases: ['pat' | 'deploy_key', string][] = [
      ['pat', 'too-short-token'],
      ['pat', `ghp_with a space in it ${'x'.repeat(20)}`],
      ['pat', 'x'.repeat(256)],
      ['pat', `tab\there${'y'.repeat(20)}`],
      ['deploy_key', githubPat()],
      [
        'deploy_key',
        '-----BEGIN OPENSSH PRIVATE KEY-----\nbm90IGFuIG9wZW5zc2gga2V5\n-----END OPENSSH PRIVATE KEY-----',
      ],
      ['deploy_key', openSshKey('aes256-ctr')],
      ['deploy_key', rsaPemKey('a passphrase')],
      ['deploy_key', '-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----'],
    ];
    for (const [kind, secret] of cases) {
      const res = await putCredential({ token: member.token }, repo.id, kind, secret);
      expect({ kind, status: res.response.status, code: res.error?.code }).toEqual({
        kind,
        status: 400,
        code: 'repo_credential_invalid',
      });
      await expectNowhere(secret, [res.error]);
    }
    expect(await t.database.prisma.repoCredential.count({ where: { repoId: repo.id } })).toBe(0);
  });

  test('when a deploy key is an OpenSSH, RSA or EC private key, then it is accepted', async () => {
    const member = await t.seedMember('member');
    for (const key of [openSshKey(), rsaPemKey(), ecPemKey()]) {
      const repo = await createRepo(member);
      const res = await putCredential({ token: member.token }, repo.id, 'deploy_key', key);
      expect(res.response.status).toBe(200);
      expect(res.data?.data.credential?.kind).toBe('deploy_key');
      await expectNowhere(key.split('\n')[1] as string, [res.data]);
    }
  });
});
