import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base-command';
import { usageError } from '../../domain/cli-error';
import type { RuntimePlan } from '../../domain/runtime-plan';
import { planLines } from '../../presenters/runtime';
import { planRuntimeHost } from '../../use-cases/runtime/plan-runtime-host';
import { runRuntimeHost } from '../../use-cases/runtime/run-runtime-host';
import type { RuntimeRunSummary } from '../../use-cases/runtime/run-runtime-host';

export default class RuntimeUp extends BaseCommand<typeof RuntimeUp> {
  static override summary =
    'Run this runtime host in the foreground: relay, console router, heartbeats, agents.';

  static override description =
    'Starts the relay and the console router for this host, reports the host to the hub every ~10 s, serves ' +
    'the local control API on the profile’s Unix socket and supervises the agents `svc start` hands over. ' +
    'When the profile is pulled again on this host with a new runtime key (`svc config pull-runtime`), it ' +
    'switches to that key without a restart: the relay and the router re-read it from an owner-only key file ' +
    'on SIGHUP, so open consoles and spawns in flight go on; when the ' +
    'hub says the key was superseded or revoked, it logs one line saying what to do. ' +
    'Stops cleanly (agents, router, relay) on SIGTERM, SIGINT or when its terminal goes away; on a server, run ' +
    'it under systemd (infra/systemd/svc-runtime.service). Needs a profile with a pulled runtime config.';

  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> --expected-workspace acme',
    '<%= config.bin %> <%= command.id %> --bundle ./runtime.env --dry-run --json',
    '<%= config.bin %> <%= command.id %> --routers 2 --router-ports 8791,8792',
  ];

  static override flags = {
    'expected-workspace': Flags.string({
      description: 'Refuse to start unless the profile (and the bundle) belong to this workspace.',
    }),
    bundle: Flags.string({
      description:
        'A runtime bundle’s runtime.env: may fill in the hub URL, workspace and keys; its wrt_… id is never the host id.',
    }),
    routers: Flags.string({
      description:
        'How many console routers to run (1–8; default 1, or SVC_CONSOLE_ROUTERS). With more than one, each ' +
        'listens on a port of its own (--router-ports, else the ports after the host console port) and a load ' +
        'balancer takes the host console port (infra/load-balancer/haproxy.cfg).',
    }),
    'router-ports': Flags.string({
      description:
        'The console routers’ ports, comma-separated, one per router (or SVC_CONSOLE_ROUTER_PORTS); alone, it sets how many.',
    }),
    'dry-run': Flags.boolean({
      description: 'Print the plan (processes, ports, variable names) and write nothing.',
    }),
  };

  public async run(): Promise<RuntimePlan | RuntimeRunSummary> {
    if (this.flags['expected-workspace']?.trim() === '') {
      throw usageError(
        'expected_workspace_empty',
        '--expected-workspace is empty',
        'pass the workspace slug (under systemd: set SVC_WORKSPACE in /etc/svc/runtime.env)',
      );
    }
    const { identity, plan, routers } = await planRuntimeHost({
      store: this.store(),
      profile: this.flags.profile,
      env: process.env,
      bundlePath: this.flags.bundle,
      expectedWorkspace: this.flags['expected-workspace'],
      routers: this.flags.routers,
      routerPorts: this.flags['router-ports'],
    });
    if (this.flags['dry-run']) {
      for (const line of planLines(plan)) this.log(line);
      return plan;
    }
    return runRuntimeHost({
      profile: this.flags.profile,
      stateDir: this.store().paths.state_dir,
      configDir: this.store().paths.config_dir,
      identity,
      routers,
      cliVersion: this.config.version,
      clientName: this.clientName(),
      env: process.env,
      logTo: this.jsonEnabled() ? 'stderr' : 'stdout',
      progress: (label, work) => this.progress(label, work),
      // A key from the environment is the operator's to change; one from the profile follows re-pulls.
      keyProfile: process.env.SVC_WORKSPACE_API_KEY ? undefined : this.store(),
    });
  }
}
