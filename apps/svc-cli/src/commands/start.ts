import { Flags } from '@oclif/core';
import { AgentHostCommand } from '../agent-host-command';
import { startLines } from '../presenters/agents';
import { startAgent } from '../use-cases/agents/start-agent';
import type { StartAgentResult } from '../use-cases/agents/start-agent';

export default class Start extends AgentHostCommand<typeof Start> {
  static override summary = 'Start an agent directly on this runtime host (no relay).';

  static override description =
    "Checks the direct start rules (SVC_RUNTIME_INSTANCE_ID is this host's rti_ id, SVC_AGENT_WORKDIR_ROOT, " +
    '--serve-public-base-url, --project or --workdir, a spawn-ready host and a running `svc runtime up`) before ' +
    'writing anything at the hub; then registers the agent if it is new, starts it at the hub (one runtime ' +
    'credential), hands its process to the local runtime and waits until it listens, is online at the hub and ' +
    'counts on the Networks view.';

  static override examples = [
    '<%= config.bin %> <%= command.id %> --name reviewer --project WEB --serve',
    '<%= config.bin %> <%= command.id %> --name builder --workdir /srv/agents/builder --model local/echo --capabilities build,test',
    '<%= config.bin %> <%= command.id %> --name worker-1 --worker --project WEB --team-id <team-id> --command "node worker.js --verbose"',
  ];

  static override flags = {
    name: Flags.string({ description: 'Agent name, unique in the workspace.', required: true }),
    command: Flags.string({
      description:
        'Program and arguments of the agent, split like a shell would but run without one. Default: the reference agent.',
    }),
    model: Flags.string({ description: 'Exact provider/model identifier from the catalog (no aliases).' }),
    capabilities: Flags.string({ description: 'Comma-separated capabilities (for a new agent).' }),
    project: Flags.string({ description: 'Project code (a new agent; never with --workdir).' }),
    'team-id': Flags.string({ description: 'Team the new agent joins.' }),
    serve: Flags.boolean({
      description: 'Serve the agent console on a local port the console router routes to.',
    }),
    'serve-port': Flags.integer({
      description: 'Serve port 1024-65535 (implies --serve); allocated when omitted. One port per agent.',
    }),
    'serve-public-base-url': Flags.string({
      description: "Must equal this server's console_public_base_url (consoleRouter.publicBaseUrl).",
    }),
    worker: Flags.boolean({ description: 'A worker agent (a new one needs --project and --team-id).' }),
    workdir: Flags.string({
      description: 'Absolute workdir inside the host workdir_root (never with --project).',
    }),
    'spawn-id': Flags.string({
      description:
        'Set by the relay when the hub spawns the agent: the start is recorded at the hub as that relay spawn (launch path relay).',
      helpGroup: 'RELAY',
    }),
    'server-local-provider-auth': Flags.boolean({
      description:
        "Development/break-glass only (needs SVC_ALLOW_SERVER_LOCAL_PROVIDER_AUTH=1): link the agent to the runtime's one provider auth file, materialized from SVC_SERVER_LOCAL_PROVIDER_AUTH_FILE.",
    }),
  };

  public async run(): Promise<StartAgentResult> {
    const context = await this.hostContext();
    const f = this.flags;
    const result = await startAgent({
      ...context,
      flags: {
        name: f.name,
        command: f.command,
        model: f.model,
        capabilities: f.capabilities,
        project: f.project,
        teamId: f['team-id'],
        serve: f.serve,
        servePort: f['serve-port'],
        servePublicBaseUrl: f['serve-public-base-url'],
        worker: f.worker,
        workdir: f.workdir,
        serverLocalProviderAuth: f['server-local-provider-auth'],
        spawnId: f['spawn-id'],
      },
      env: {
        SVC_RUNTIME_INSTANCE_ID: process.env.SVC_RUNTIME_INSTANCE_ID,
        SVC_AGENT_WORKDIR_ROOT: process.env.SVC_AGENT_WORKDIR_ROOT,
        SVC_ALLOW_SERVER_LOCAL_PROVIDER_AUTH: process.env.SVC_ALLOW_SERVER_LOCAL_PROVIDER_AUTH,
        SVC_SERVER_LOCAL_PROVIDER_AUTH_FILE: process.env.SVC_SERVER_LOCAL_PROVIDER_AUTH_FILE,
        SVC_WORKFLOW_URL: process.env.SVC_WORKFLOW_URL,
        SVC_AGENT_HANDLER: process.env.SVC_AGENT_HANDLER,
      },
      progress: this.spin,
    });
    for (const line of startLines(result)) this.log(line);
    return result;
  }
}
