import {
  hostCheck,
  isAllowedHost,
  isAllowedOrigin,
  isLoopbackAddress,
  isLoopbackHost,
  originRules,
} from './request-origin';

const rules = originRules('https://Console.Example.test/');

describe('Host and Origin rules', () => {
  test.each([
    '127.0.0.1:8790',
    'localhost',
    'LOCALHOST:80',
    '[::1]:8790',
    '127.1.2.3',
    'console.example.test',
  ])('when Host is %s, then it is allowed', (host) => {
    expect(isAllowedHost(host, rules)).toBe(true);
  });

  test.each([
    undefined,
    '',
    'evil.example',
    'console.example.test.evil.example',
    '10.0.0.1:8790',
    'console.example.test:444',
  ])('when Host is %s, then it is refused (DNS rebinding)', (host) => {
    expect(isAllowedHost(host, rules)).toBe(false);
  });

  test('when no public base URL is configured, then only loopback hosts pass', () => {
    expect(isAllowedHost('console.example.test', originRules(undefined))).toBe(false);
    expect(isLoopbackHost('console.example.test')).toBe(false);
  });

  test.each(['https://console.example.test', 'http://127.0.0.1:5173', 'http://localhost:3000'])(
    'when Origin is %s, then a WebSocket may open',
    (origin) => {
      expect(isAllowedOrigin(origin, rules)).toBe(true);
    },
  );

  test.each([
    undefined,
    'null',
    'https://evil.example',
    'http://console.example.test',
    'https://console.example.test/path',
    'file://',
  ])('when Origin is %s, then a WebSocket is refused', (origin) => {
    expect(isAllowedOrigin(origin, rules)).toBe(false);
  });

  test('when page origins are configured, then their WebSockets may open, but they are no allowed Host', () => {
    const withPages = originRules('https://console.example.test', ['https://Control.Example.test']);
    expect(isAllowedOrigin('https://control.example.test', withPages)).toBe(true);
    expect(isAllowedOrigin('http://control.example.test', withPages)).toBe(false);
    expect(isAllowedOrigin('https://control.example.test.evil.example', withPages)).toBe(false);
    expect(isAllowedOrigin('https://control.example.test', rules)).toBe(false);
    expect(isAllowedHost('control.example.test', withPages)).toBe(false);
    expect(
      isAllowedOrigin(
        'https://control.example.test',
        originRules(undefined, ['https://control.example.test']),
      ),
    ).toBe(true);
  });

  test('when remote addresses are read, then loopback ones are told apart', () => {
    expect(isLoopbackAddress('127.0.0.1')).toBe(true);
    expect(isLoopbackAddress('::ffff:127.0.0.1')).toBe(true);
    expect(isLoopbackAddress('::1')).toBe(true);
    expect(isLoopbackAddress('10.0.0.2')).toBe(false);
    expect(isLoopbackAddress(undefined)).toBe(false);
  });
});

describe('the remembered Host check', () => {
  test('when the same and then many distinct Host values come, then each verdict matches isAllowedHost', () => {
    const check = hostCheck(rules);
    for (let round = 0; round < 2; round++) {
      for (const host of ['127.0.0.1:8790', 'console.example.test', 'evil.example', '', undefined]) {
        expect(check(host)).toBe(isAllowedHost(host, rules));
      }
    }
    for (let i = 0; i < 600; i++) expect(check(`10.0.${i % 250}.${i}:1`)).toBe(false);
    expect(check('localhost:1')).toBe(true);
  });
});
