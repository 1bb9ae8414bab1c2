import { buildIngress, tunnelHostname, validateIngress } from './tunnel-ingress';

describe('tunnel ingress', () => {
  test('when the ingress is built, then console and relay go to their loopback ports and a 404 catch-all ends it', () => {
    expect(
      buildIngress({
        consoleHostname: 'a-console.example.test',
        relayHostname: 'a-relay.example.test',
        consoleListenPort: 8790,
        relayListenPort: 8787,
      }),
    ).toEqual([
      { hostname: 'a-console.example.test', service: 'http://127.0.0.1:8790' },
      { hostname: 'a-relay.example.test', service: 'http://127.0.0.1:8787' },
      { service: 'http_status:404' },
    ]);
  });

  test.each([
    ['no catch-all', [{ hostname: 'a.test', service: 'http://127.0.0.1:1' }]],
    [
      'a catch-all before the end',
      [{ service: 'http_status:404' }, { hostname: 'a.test', service: 'http://127.0.0.1:1' }],
    ],
    ['two catch-alls', [{ service: 'http_status:404' }, { service: 'http_status:404' }]],
    [
      'a hostname twice',
      [
        { hostname: 'a.test', service: 'http://127.0.0.1:1' },
        { hostname: 'A.test', service: 'http://127.0.0.1:2' },
        { service: 'http_status:404' },
      ],
    ],
  ])('when the document has %s, then it is refused before it leaves the hub', (_label, rules) => {
    expect(() => validateIngress(rules)).toThrow(expect.objectContaining({ code: 'tunnel_ingress_invalid' }));
  });

  test('when a hostname label would pass 63 characters, then the slug is shortened with a hash of the workspace id', () => {
    const short = tunnelHostname({
      zone: 'example.test',
      workspaceId: 'ws_1',
      workspaceSlug: 'acme',
      environmentName: 'prod',
      service: 'console',
    });
    expect(short).toBe('acme-prod-console.example.test');
    const slug = 'a'.repeat(40);
    const long = (workspaceId: string) =>
      tunnelHostname({
        zone: 'example.test',
        workspaceId,
        workspaceSlug: slug,
        environmentName: 'e'.repeat(24),
        service: 'console',
      });
    const [label] = long('ws_1').split('.');
    expect(label!.length).toBeLessThanOrEqual(63);
    expect(label).toMatch(/^a+-[0-9a-f]{6}-e{24}-console$/);
    expect(long('ws_1')).not.toBe(long('ws_2'));
  });
});
