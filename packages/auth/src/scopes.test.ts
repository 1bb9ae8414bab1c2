import {
  ALL_SCOPES,
  DESTRUCTIVE_SCOPES,
  HUB_SCOPES,
  SCOPE_PRESETS,
  SCOPE_PRESET_NAMES,
  WORKFLOW_SCOPES,
  isScope,
  isScopePreset,
  missingScopes,
  parseScopes,
} from './scopes';

describe('scope catalog', () => {
  it('when the catalog is listed, then it holds the 9 workflow and 22 hub scopes without duplicates', () => {
    expect(WORKFLOW_SCOPES).toHaveLength(9);
    expect(HUB_SCOPES).toHaveLength(22);
    expect(new Set(ALL_SCOPES).size).toBe(31);
    expect([...ALL_SCOPES].sort()).toEqual([...HUB_SCOPES, ...WORKFLOW_SCOPES].sort());
  });

  it('when a string is checked, then only exact catalog entries are scopes', () => {
    expect(isScope('artifact-schemas:read')).toBe(true);
    expect(isScope('contract:read')).toBe(true);
    expect(isScope('artifact-schemas:*')).toBe(false);
    expect(isScope('Projects:read')).toBe(false);
    expect(isScope(' projects:read')).toBe(false);
    expect(isScope('')).toBe(false);
    expect(isScope(42)).toBe(false);
    expect(isScope(undefined)).toBe(false);
  });
});

describe('parseScopes', () => {
  it('when the list has duplicates in any order, then it returns them deduplicated and sorted', () => {
    expect(parseScopes(['workflows:run', 'agents:read', 'workflows:run', 'contract:read'])).toEqual({
      scopes: ['agents:read', 'contract:read', 'workflows:run'],
    });
  });

  it('when the list is empty, then it returns no scopes', () => {
    expect(parseScopes([])).toEqual({ scopes: [] });
  });

  it('when the list holds unknown entries, then it reports every one of them and no scopes', () => {
    expect(parseScopes(['projects:read', 'projects:*', 'admin', 'projects:*'])).toEqual({
      unknown: ['projects:*', 'admin'],
    });
  });

  it('when the list holds non-string entries, then they are reported in a readable form', () => {
    expect(parseScopes(['projects:read', 7, null, { a: 1 }])).toEqual({ unknown: ['7', 'null', '{"a":1}'] });
  });

  it('when a space-separated scope string is given, then it is parsed like a list', () => {
    expect(parseScopes('workflows:read  contract:read workflows:read')).toEqual({
      scopes: ['contract:read', 'workflows:read'],
    });
  });

  it('when the input is neither a list nor a string, then it is reported as unknown', () => {
    expect(parseScopes(undefined)).toEqual({ unknown: ['undefined'] });
    expect(parseScopes({ scopes: [] })).toEqual({ unknown: ['{"scopes":[]}'] });
  });

  it('when an unknown entry is very long, then the report truncates it', () => {
    const result = parseScopes(['x'.repeat(10_000)]);
    expect('unknown' in result && result.unknown[0]?.length).toBe(65);
  });
});

describe('missingScopes', () => {
  it('when every required scope is granted, then nothing is missing', () => {
    expect(missingScopes(['a:read', 'projects:read', 'teams:read'], ['teams:read', 'projects:read'])).toEqual(
      [],
    );
  });

  it('when some scopes are not granted, then they are returned once each in required order', () => {
    expect(
      missingScopes(['projects:read'], ['teams:write', 'projects:read', 'agents:read', 'teams:write']),
    ).toEqual(['teams:write', 'agents:read']);
  });

  it('when broad or write scopes are granted, then they never imply another scope', () => {
    expect(missingScopes(['projects:write'], ['projects:read'])).toEqual(['projects:read']);
    expect(missingScopes(['admin:workspace'], ['artifact-schemas:read'])).toEqual(['artifact-schemas:read']);
    expect(missingScopes(['artifact-schemas:*', '*'], ['artifact-schemas:write'])).toEqual([
      'artifact-schemas:write',
    ]);
    expect(missingScopes([...SCOPE_PRESETS.automation], ['artifact-schemas:read'])).toEqual([
      'artifact-schemas:read',
    ]);
  });

  it('when nothing is required, then nothing is missing', () => {
    expect(missingScopes([], [])).toEqual([]);
  });
});

describe('scope presets', () => {
  const explicitOnly = (scope: string): boolean =>
    scope.startsWith('artifact-schemas:') ||
    scope.startsWith('admin:') ||
    scope === 'workflow-delivery:manage' ||
    (DESTRUCTIVE_SCOPES as readonly string[]).includes(scope);

  it.each(SCOPE_PRESET_NAMES)(
    'when the %s preset is expanded, then it holds no artifact-schemas, delivery, admin or destructive scope',
    (name) => {
      const scopes = SCOPE_PRESETS[name];
      expect(scopes.filter(explicitOnly)).toEqual([]);
      expect(scopes.every((scope) => isScope(scope))).toBe(true);
      expect(new Set(scopes).size).toBe(scopes.length);
    },
  );

  it('when the read-only preset is expanded, then it is every observer read scope plus contract:read', () => {
    expect(SCOPE_PRESETS['read-only']).toEqual(
      [
        'agents:read',
        'api-keys:read',
        'audit:read',
        'contract:read',
        'handoffs:read',
        'projects:read',
        'repos:read',
        'teams:read',
        'workflow-artifacts:read',
        'workflow-contracts:read',
        'workflows:read',
        'workspaces:read',
      ].sort(),
    );
    expect(SCOPE_PRESETS['read-only'].every((scope) => scope.endsWith(':read'))).toBe(true);
  });

  it('when the read-only preset is expanded, then the secret-bearing runtime config read is not in it', () => {
    expect(SCOPE_PRESETS['read-only']).not.toContain('runtime-config:read');
    expect(SCOPE_PRESETS.automation).not.toContain('runtime-config:read');
  });

  it('when the automation preset is expanded, then it is read-only plus the automation write scopes', () => {
    const added = SCOPE_PRESETS.automation.filter((scope) => !SCOPE_PRESETS['read-only'].includes(scope));
    expect(added).toEqual(
      [
        'handoffs:write',
        'projects:write',
        'teams:write',
        'workflow-artifacts:write',
        'workflow-contracts:write',
        'workflows:run',
      ].sort(),
    );
    expect(SCOPE_PRESETS['read-only'].every((scope) => SCOPE_PRESETS.automation.includes(scope))).toBe(true);
  });

  it('when the agent-runtime preset is expanded, then it holds exactly the runtime host scopes', () => {
    expect(SCOPE_PRESETS['agent-runtime']).toEqual(
      [
        'agents:read',
        'agents:spawn',
        'agents:write',
        'contract:read',
        'handoffs:read',
        'handoffs:write',
        'messages:write',
        'runtime-config:read',
        'runtime-hosts:write',
        'workflows:read',
      ].sort(),
    );
  });

  it('when a preset list is mutated, then the mutation is refused', () => {
    expect(() => (SCOPE_PRESETS['read-only'] as string[]).push('admin:workspace')).toThrow(TypeError);
    expect(SCOPE_PRESETS['read-only']).not.toContain('admin:workspace');
  });

  it('when a preset name is checked, then only the three preset names pass', () => {
    expect(isScopePreset('read-only')).toBe(true);
    expect(isScopePreset('automation')).toBe(true);
    expect(isScopePreset('agent-runtime')).toBe(true);
    expect(isScopePreset('admin')).toBe(false);
    expect(isScopePreset('toString')).toBe(false);
    expect(isScopePreset(null)).toBe(false);
  });

  it('when the destructive scopes are listed, then all are catalog scopes and include artifact-schemas:write', () => {
    expect(DESTRUCTIVE_SCOPES.every((scope) => isScope(scope))).toBe(true);
    expect(DESTRUCTIVE_SCOPES).toEqual(
      expect.arrayContaining([
        'artifact-schemas:write',
        'admin:workspace',
        'api-keys:write',
        'workflow-delivery:manage',
      ]),
    );
  });
});
