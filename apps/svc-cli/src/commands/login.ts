import { Flags } from '@oclif/core';
import { BaseCommand } from '../base-command';
import { presentLogin } from '../presenters/accounts';
import { loginParticipant } from '../use-cases/auth/login-participant';
import { parseOverlap } from '../use-cases/config/pull-runtime-config';
import type { LoginResult } from '../use-cases/auth/login-participant';

export default class Login extends BaseCommand<typeof Login> {
  static override summary = 'Sign in to a hub as a participant and store the token in the profile.';

  static override description =
    'Signs in with your email and password, checks that you can access the workspace, and stores the hub URL, ' +
    'workspace and participant token in the profile (mode 0600). The email comes from --email or a prompt; the ' +
    'password from a prompt without echo or from stdin with --password-stdin (never from a flag). With ' +
    '--pull-runtime it then pulls the runtime config as `svc config pull-runtime` does: the runtime key the ' +
    "profile holds is kept while it is the host's current key, else a new one is issued and the previous one " +
    'stays valid for --overlap (default 24h).';

  static override examples = [
    '<%= config.bin %> <%= command.id %> --hub-url https://hub.example.com --workspace acme',
    'printf %s "$SVC_PASSWORD" | <%= config.bin %> <%= command.id %> --hub-url https://hub.example.com --workspace acme --email ops@acme.test --password-stdin --pull-runtime --json',
  ];

  static override flags = {
    'hub-url': Flags.string({ description: 'Base URL of the hub.', required: true }),
    workspace: Flags.string({ description: 'Workspace slug.', required: true }),
    email: Flags.string({ description: 'Participant email (prompted for on a terminal when omitted).' }),
    'password-stdin': Flags.boolean({ description: 'Read the password from stdin.', default: false }),
    'pull-runtime': Flags.boolean({
      description: 'Also pull the runtime config (svc config pull-runtime).',
      default: false,
    }),
    'rotate-key': Flags.boolean({
      description:
        'With --pull-runtime: issue a new runtime key even when the profile holds the current one.',
    }),
    overlap: Flags.string({
      description:
        'With --pull-runtime, after a rotation: how long the previous runtime key stays valid (0, or e.g. 24h; default 24h).',
    }),
  };

  public async run(): Promise<LoginResult> {
    const result = await loginParticipant({
      hubUrl: this.flags['hub-url'],
      workspace: this.flags.workspace,
      email: this.flags.email,
      passwordStdin: this.flags['password-stdin'],
      pullRuntime: this.flags['pull-runtime'],
      rotateKey: this.flags['rotate-key'],
      overlapSeconds: parseOverlap(this.flags.overlap),
      store: this.store(),
      clientName: this.clientName(),
      runtimeInstanceIdEnv: process.env.SVC_RUNTIME_INSTANCE_ID,
      progress: (label, work) => this.progress(label, work),
    });
    for (const line of presentLogin(result)) this.log(line);
    return result;
  }
}
