import { BaseCommand } from '../base-command';
import { presentProfile } from '../presenters/accounts';
import { summarizeProfile } from '../use-cases/config/summarize-profile';
import type { ProfileSummary } from '../use-cases/config/summarize-profile';

export default class Profile extends BaseCommand<typeof Profile> {
  static override summary = 'Show who this profile is logged in as and which runtime host it pulled.';

  static override description =
    'The hub, workspace, participant email and token expiry, and the pulled runtime host (when and which). ' +
    'Reads local files only; never prints a secret.';

  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> --json',
  ];

  public async run(): Promise<ProfileSummary> {
    await this.readProfile(); // a damaged file is a one-line error naming it
    const summary = await summarizeProfile(this.store());
    for (const line of presentProfile(summary)) this.log(line);
    return summary;
  }
}
