import { readFileSync, realpathSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import WebSocket from 'ws';
import { eventually } from '@svc/testing';
import { PROXY_CALLER_HEADER, PROXY_KEY_HEADER } from '../src';
import { PARTICIPANT_ID, PROXY_KEY, mint, startTestConsole } from './support/console';
import type { TestConsole } from './support/console';

const SECRET = 'agent-token-that-must-not-leak-0123456789';
let t: TestConsole;

beforeAll(async () => {
  t = await startTestConsole({
    terminalBaseEnv: { PATH: process.env.PATH, HOME: '/tmp', LANG: 'C.UTF-8', AGENT_TOKEN: SECRET },
    terminalKillGraceMs: 500,
  });
});
afterAll(async () => {
  await t.close();
});

/** A terminal client: everything the shell printed so far, and helpers to type and wait. */
class Terminal {
  output = '';
  closed: Promise<{ code: number; reason: string }>;

  constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer, isBinary) => {
      if (isBinary) this.output += data.toString('utf8');
    });
    this.closed = new Promise((resolve) =>
      ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })),
    );
  }

  static open(query: string, headers: Record<string, string> = {}): Promise<Terminal> {
    const ws = new WebSocket(`${t.url.replace('http', 'ws')}/terminal${query}`, { headers });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new Terminal(ws)));
      ws.once('error', reject);
    });
  }

  type(text: string): void {
    this.ws.send(Buffer.from(text, 'utf8'), { binary: true });
  }

  /** The first match of `pattern` in the output, once the shell has printed it. */
  printed(pattern: RegExp, timeoutMs = 10_000): Promise<RegExpMatchArray> {
    return eventually(() => this.output.match(pattern), timeoutMs, String(pattern), {
      intervalMs: 20,
      describe: () => `got ${JSON.stringify(this.output)}`,
    });
  }
}

/** A process that has exited but not been reaped yet (its parent, the shell, is gone). */
function isZombie(pid: number): boolean {
  try {
    return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Attempts an upgrade that must be refused; returns the HTTP answer and whether the socket was closed. */
function refusedUpgrade(
  query: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; type: string; body: Record<string, unknown>; socketClosed: Promise<void> }> {
  const ws = new WebSocket(`${t.url.replace('http', 'ws')}/terminal${query}`, { headers });
  ws.on('error', () => undefined);
  return new Promise((resolve, reject) => {
    ws.once('open', () => reject(new Error('the upgrade was accepted')));
    ws.once('unexpected-response', (_req, res: IncomingMessage) => {
      const socketClosed = new Promise<void>((done) => {
        if (res.socket.destroyed) done();
        else res.socket.once('close', () => done());
      });
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          type: String(res.headers['content-type']),
          body: JSON.parse(text) as Record<string, unknown>,
          socketClosed,
        }),
      );
    });
  });
}

describe('terminal', () => {
  test('when a participant opens it with a ticket, then a shell runs in the workdir and answers typed commands', async () => {
    const term = await Terminal.open(`?ticket=${mint.ticket()}`);
    term.type('echo hello-$((40+2))\n');
    await term.printed(/hello-42/);
    term.type('pwd\n');
    await term.printed(new RegExp(realpathSync(t.workdir).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')));
    term.ws.close();
    await term.closed;
  });

  test('when the shell runs, then it sees only the allow-listed environment (never the agent token)', async () => {
    const term = await Terminal.open(`?ticket=${mint.ticket()}`);
    term.type('env; echo env-done\n');
    await term.printed(/env-done\r?\n[\s\S]*env-done|env-done\r?\n/);
    await term.printed(/TERM=xterm-256color/);
    expect(term.output).not.toContain(SECRET);
    expect(term.output).not.toContain('AGENT_TOKEN');
    expect(term.output).toContain('HOME=/tmp');
    term.ws.close();
    await term.closed;
  });

  test('when a resize frame is sent, then stty size shows the new size', async () => {
    const term = await Terminal.open(`?ticket=${mint.ticket()}&cols=80&rows=24`);
    term.type('stty size\n');
    await term.printed(/24 80/);
    term.ws.send(JSON.stringify({ type: 'resize', cols: 132, rows: 43 }));
    term.type('stty size\n');
    await term.printed(/43 132/);
    term.ws.close();
    await term.closed;
  });

  test('when the socket closes, then the shell, its process group and its background jobs end', async () => {
    const before = new Set(t.console.terminalSessions());
    const term = await Terminal.open(`?ticket=${mint.ticket()}`);
    // A job-control shell runs the background job in a process group of its own.
    term.type('sleep 300 & echo job-$!-started\n');
    const job = Number((await term.printed(/job-(\d+)-started/))[1]);
    const session = [...t.console.terminalSessions()].find((s) => !before.has(s))!;
    expect(pidAlive(session.pid)).toBe(true);
    expect(pidAlive(job)).toBe(true);
    term.ws.close();
    await session.ended;
    expect(pidAlive(session.pid)).toBe(false);
    expect(() => process.kill(-session.pid, 0)).toThrow();
    await eventually(() => !pidAlive(job) || isZombie(job), 5_000, `job ${job} ended`, { intervalMs: 20 });
    expect(t.console.terminalSessions().has(session)).toBe(false);
  });

  test('when a job ignores SIGHUP, then it is killed after the grace', async () => {
    const term = await Terminal.open(`?ticket=${mint.ticket()}`);
    term.type('sh -c \'trap "" HUP; sleep 300\' & echo stubborn-$!-started\n');
    const job = Number((await term.printed(/stubborn-(\d+)-started/))[1]);
    const session = [...t.console.terminalSessions()].at(-1)!;
    const closedAt = Date.now();
    term.ws.close();
    await session.ended;
    await eventually(() => !pidAlive(job) || isZombie(job), 5_000, `job ${job} ended`, { intervalMs: 20 });
    // The grace (500 ms here) passed before SIGKILL.
    expect(Date.now() - closedAt).toBeGreaterThanOrEqual(450);
  });

  test('when the shell exits, then the socket closes with 1000', async () => {
    const term = await Terminal.open(`?ticket=${mint.ticket()}`);
    term.type('exit\n');
    expect((await term.closed).code).toBe(1000);
  });

  test('when the router forwards a participant with the proxy key, then the terminal opens', async () => {
    const term = await Terminal.open('', {
      [PROXY_KEY_HEADER]: PROXY_KEY,
      [PROXY_CALLER_HEADER]: `participant:${PARTICIPANT_ID}`,
    });
    term.type('echo via-router-$((2*3))\n');
    await term.printed(/via-router-6/);
    term.ws.close();
    await term.closed;
  });

  test('when an upgrade has no credential, then a JSON 401 is answered and the socket is closed', async () => {
    const res = await refusedUpgrade('');
    expect(res.status).toBe(401);
    expect(res.type).toMatch(/^application\/problem\+json/);
    expect(res.body.code).toBe('credential_missing');
    await res.socketClosed;
  });

  test('when an upgrade presents a participant JWT, another agent, its own agent token or a wrong proxy key, then it is refused as on HTTP', async () => {
    const participant = await refusedUpgrade('', { authorization: `Bearer ${mint.participant()}` });
    expect([participant.status, participant.body.code]).toEqual([403, 'console_router_required']);
    const own = await refusedUpgrade('', { authorization: `Bearer ${mint.agent()}` });
    expect([own.status, own.body.code]).toEqual([403, 'actor_not_allowed']);
    const proxiedAgent = await refusedUpgrade('', {
      [PROXY_KEY_HEADER]: PROXY_KEY,
      [PROXY_CALLER_HEADER]: 'agent:agt_peer',
    });
    expect([proxiedAgent.status, proxiedAgent.body.code]).toEqual([403, 'actor_not_allowed']);
    const wrongKey = await refusedUpgrade('', {
      [PROXY_KEY_HEADER]: 'not-the-key',
      [PROXY_CALLER_HEADER]: `participant:${PARTICIPANT_ID}`,
    });
    expect([wrongKey.status, wrongKey.body.code]).toEqual([401, 'credential_invalid']);
    const otherAgentTicket = await refusedUpgrade(`?ticket=${mint.ticket({ agent: 'agt_other' })}`);
    expect([otherAgentTicket.status, otherAgentTicket.body.code]).toEqual([401, 'credential_invalid']);
    await Promise.all(
      [participant, own, proxiedAgent, wrongKey, otherAgentTicket].map((r) => r.socketClosed),
    );
  });

  test('when the size is out of range or the path is not /terminal, then a JSON 400 or 404', async () => {
    const bad = await refusedUpgrade(`?ticket=${mint.ticket()}&cols=0`);
    expect([bad.status, bad.body.code]).toEqual([400, 'validation_failed']);
    const ws = new WebSocket(`${t.url.replace('http', 'ws')}/elsewhere?ticket=${mint.ticket()}`);
    ws.on('error', () => undefined);
    const status = await new Promise<number>((resolve) =>
      ws.once('unexpected-response', (_req, res: IncomingMessage) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      }),
    );
    expect(status).toBe(404);
  });

  test('when the console closes, then open sessions end with 1001 and their shells are gone', async () => {
    const own = await startTestConsole({ terminalKillGraceMs: 200 });
    const ws = new WebSocket(`${own.url.replace('http', 'ws')}/terminal?ticket=${mint.ticket()}`);
    const term = await new Promise<Terminal>((resolve, reject) => {
      ws.once('open', () => resolve(new Terminal(ws)));
      ws.once('error', reject);
    });
    term.type('echo ready-$((3+4))\n');
    await term.printed(/ready-7/);
    const [session] = [...own.console.terminalSessions()];
    await own.close();
    expect((await term.closed).code).toBe(1001);
    expect(pidAlive(session!.pid)).toBe(false);
  });
});
