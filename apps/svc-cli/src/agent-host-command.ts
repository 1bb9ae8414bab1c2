import type { Command } from '@oclif/core';
import { BaseCommand } from './base-command';
import { CliError } from './domain/cli-error';
import type { HostContext } from './use-cases/agents/host-context';

/**
 * The base of the agent commands of a runtime host (`svc start`, `stop`, `list`, `ask`, `internal inbox`):
 * the hub client of the runtime account (the workspace API key of `config pull-runtime`, or
 * `SVC_WORKSPACE_API_KEY`), falling back to the participant's token, plus the profile and its state directory.
 */
export abstract class AgentHostCommand<T extends typeof Command> extends BaseCommand<T> {
  protected async hostContext(): Promise<HostContext> {
    let connected;
    try {
      connected = await this.runtimeHub();
    } catch (error) {
      if (!(error instanceof CliError) || error.code !== 'auth_required') throw error;
      connected = await this.participantHub();
    }
    const stateDir = await this.store().stateDir();
    return {
      hub: connected.hub,
      hubUrl: connected.profile.hub_url,
      workspace: connected.profile.workspace,
      profile: connected.profile,
      stateDir,
    };
  }

  /** Runs a wait behind the spinner (bound, so a use case can call it). */
  protected readonly spin = <R>(label: string, work: () => Promise<R>): Promise<R> =>
    this.progress(label, work);
}
