import { BaseCommand } from '../../base-command';
import type { ConfigPaths } from '../../domain/config-paths';

export default class ConfigPath extends BaseCommand<typeof ConfigPath> {
  static override summary = 'Print where svc keeps its configuration.';

  static override description =
    'Shows the resolved configuration directory and the file of the selected profile. ' +
    'Reads no files and makes no network calls; the paths may not exist yet.';

  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> --profile staging --json',
    '<%= config.bin %> <%= command.id %> --config-dir /srv/svc/config',
  ];

  public async run(): Promise<ConfigPaths> {
    const paths = this.configPaths();
    this.log(`config_dir    ${paths.config_dir}`);
    this.log(`profile       ${paths.profile}`);
    this.log(`profile_path  ${paths.profile_path}`);
    return paths;
  }
}
