import { CliError } from './cli-error';
import { routerReplicas } from './router-replicas';

const none = { SVC_CONSOLE_ROUTERS: undefined, SVC_CONSOLE_ROUTER_PORTS: undefined };

function refusal(run: () => unknown): { code: string; exit: number } {
  try {
    run();
  } catch (error) {
    if (error instanceof CliError) return { code: error.code, exit: error.exit };
    throw error;
  }
  throw new Error('not refused');
}

describe('routerReplicas', () => {
  test('when nothing asks for more, then one router listens on the host console port', () => {
    expect(routerReplicas({ listenPort: 8790, env: none })).toEqual({ count: 1, ports: [8790] });
  });

  test('when N routers are asked for without ports, then they take the N ports after the console port', () => {
    expect(routerReplicas({ listenPort: 8790, routers: '2', env: none })).toEqual({
      count: 2,
      ports: [8791, 8792],
    });
    expect(routerReplicas({ listenPort: 8790, env: { SVC_CONSOLE_ROUTERS: '3' } })).toEqual({
      count: 3,
      ports: [8791, 8792, 8793],
    });
  });

  test('when ports are given, then they set the count, and a flag wins over its variable', () => {
    expect(routerReplicas({ listenPort: 8790, routerPorts: '9001, 9002', env: none })).toEqual({
      count: 2,
      ports: [9001, 9002],
    });
    expect(
      routerReplicas({
        listenPort: 8790,
        routers: '1',
        env: { SVC_CONSOLE_ROUTERS: '4', SVC_CONSOLE_ROUTER_PORTS: undefined },
      }),
    ).toEqual({ count: 1, ports: [8790] });
  });

  test('when the count or the ports cannot work, then it is a usage error naming the setting', () => {
    for (const routers of ['0', '9', 'two', '1.5'])
      expect(refusal(() => routerReplicas({ listenPort: 8790, routers, env: none }))).toEqual({
        code: 'console_routers_invalid',
        exit: 2,
      });
    for (const routerPorts of ['9001,9001', '9001,x', '0', '70000'])
      expect(refusal(() => routerReplicas({ listenPort: 8790, routerPorts, env: none }))).toEqual({
        code: 'console_router_ports_invalid',
        exit: 2,
      });
    // Three routers on two ports; a router on the balancer's port.
    expect(
      refusal(() => routerReplicas({ listenPort: 8790, routers: '3', routerPorts: '9001,9002', env: none })),
    ).toMatchObject({ code: 'console_router_ports_invalid' });
    expect(
      refusal(() => routerReplicas({ listenPort: 8790, routerPorts: '8790,8791', env: none })),
    ).toMatchObject({ code: 'console_router_ports_invalid' });
  });
});
