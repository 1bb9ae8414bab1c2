import { BaseCommand } from '../../base-command';
import { presentConfigDocument } from '../../presenters/accounts';
import { showConfig } from '../../use-cases/config/show-config';

export default class ConfigShow extends BaseCommand<typeof ConfigShow> {
  static override summary = 'Show the whole local configuration, secrets as present or absent.';

  static override description =
    "The profile, the runtime env file, the svc variables of this environment and the agents' local state on " +
    'this host. Each secret shows only whether it is set (present / absent), never its value.';

  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> --json',
  ];

  public async run(): Promise<Record<string, unknown>> {
    await this.readProfile();
    const document = await showConfig(this.store(), process.env);
    for (const line of presentConfigDocument(document)) this.log(line);
    return document;
  }
}
