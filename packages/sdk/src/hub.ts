/** The public Hub API: the raw typed path client and resource methods for the caller's identity and projects. */
import createClient from 'openapi-fetch';
import type { Client } from 'openapi-fetch';
import { createTransport } from './core.js';
import type { ClientOptions } from './core.js';
import type { paths } from './generated/hub.js';
import { signalOf, unwrap } from './request.js';
import type { RequestOptions } from './request.js';
import type { HubMe, HubProject } from './types.js';

export type HubPaths = paths;

export class Hub {
  /** The typed path client over the same transport (timeouts, retries and credentials apply). */
  readonly raw: Client<paths>;
  readonly projects: {
    list(workspace: string, options?: RequestOptions): Promise<HubProject[]>;
    get(projectId: string, options?: RequestOptions): Promise<HubProject>;
  };

  constructor(options: ClientOptions) {
    const transport = createTransport(options);
    const raw = createClient<paths>({ baseUrl: transport.baseUrl, fetch: transport.fetch });
    this.raw = raw;
    this.projects = {
      async list(workspace, opts) {
        return unwrap(
          await raw.GET('/api/v1/workspaces/{workspace}/projects', {
            params: { path: { workspace } },
            ...signalOf(opts),
          }),
        );
      },
      async get(projectId, opts) {
        return unwrap(
          await raw.GET('/api/v1/projects/{projectId}', {
            params: { path: { projectId } },
            ...signalOf(opts),
          }),
        );
      },
    };
  }

  /** The authenticated participant (needs a participant token). */
  async me(options?: RequestOptions): Promise<HubMe> {
    return unwrap(await this.raw.GET('/api/v1/me', { ...signalOf(options) }));
  }
}
