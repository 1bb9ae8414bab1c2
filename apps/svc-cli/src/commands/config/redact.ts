import { BaseCommand } from '../../base-command';
import { redactConfig } from '../../use-cases/config/redact-config';

export default class ConfigRedact extends BaseCommand<typeof ConfigRedact> {
  static override summary = 'Print the full local configuration with every secret replaced (safe to paste).';

  static override description =
    "The profile, runtime env file, svc variables of this environment and agents' local state, with tokens, " +
    'API keys, provider credentials and relay tokens replaced by [redacted], by field name and by value shape.';

  static override examples = ['<%= config.bin %> <%= command.id %> --json'];

  public async run(): Promise<unknown> {
    await this.readProfile();
    const document = await redactConfig(this.store(), process.env);
    this.log(JSON.stringify(document, null, 2));
    return document;
  }
}
