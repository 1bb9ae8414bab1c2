import fs from 'node:fs';
import path from 'node:path';
import { jsonOf, runSvc, tempHome } from './support/cli';

/** Argument handling and `--json` failure envelopes of the agent commands, without a hub. */
describe('agent commands without a login', () => {
  let home: string;
  beforeAll(() => {
    home = tempHome('svc-agents-cli-');
  });
  afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

  const svc = (args: string[]) => runSvc(args, home, { SVC_CONFIG_DIR: path.join(home, 'config') });

  it.each([
    [['list']],
    [['stop', 'alpha']],
    [['start', '--name', 'alpha', '--project', 'WEB']],
    [['internal', 'inbox', '--name', 'alpha']],
    [['ask', 'alpha', 'hello', '--timeout-seconds', '5']],
  ])(
    'when `svc %p --json` runs without a login, then it is one JSON failure envelope with exit 4',
    async (args) => {
      const result = await svc([...args, '--json']);
      expect(result.code).toBe(4);
      expect(jsonOf(result)).toMatchObject({ ok: false, error: { code: 'auth_required', exit_code: 4 } });
      expect(typeof jsonOf(result).error?.fix).toBe('string');
    },
  );

  it.each([
    [['start', '--json']],
    [['stop', '--json']],
    [['ask', 'alpha', '--json']],
    [['internal', 'inbox', '--json']],
  ])('when `svc %p` has a wrong command line, then it is a usage error (exit 2)', async (args) => {
    const result = await svc(args);
    expect(result.code).toBe(2);
    expect(jsonOf(result)).toMatchObject({ ok: false, error: { code: 'usage', exit_code: 2 } });
  });

  it('when the agent commands are listed, then each has its summary in --help', async () => {
    const help = await svc(['--help']);
    expect(help.code).toBe(0);
    for (const command of ['ask', 'list', 'start', 'stop'])
      expect(help.stdout).toMatch(new RegExp(`\\n\\s+${command}\\s+\\S`));
    const inbox = await svc(['internal', '--help']);
    expect(inbox.stdout).toMatch(/internal inbox\s+Show an agent's inbox/);
  });
});
