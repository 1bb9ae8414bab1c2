import { AuthenticationError, APIError, Hub, unwrap } from '@svc/sdk';
import { DemoError } from './stack-file';
import type { StackFile } from './stack-file';

/**
 * The participant's hub session. It starts from the token in the stack file; when the hub answers 401 (the
 * token expired) it signs in again with the file's email and password and repeats the call once.
 */
export class HubSession {
  readonly hub: Hub;
  private token: string;
  /** True once the token from the file was replaced by a fresh sign-in. */
  refreshed = false;

  constructor(private readonly stack: StackFile) {
    this.token = stack.participant.token;
    this.hub = new Hub({ baseUrl: stack.hub_url, token: () => this.token });
  }

  /** Checks the token (`GET /api/v1/me`) and signs in again when it is no longer accepted. */
  async ensure(): Promise<void> {
    await this.call(() => this.hub.me());
  }

  /** Runs a hub call; on 401 signs in again and runs it once more. */
  async call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      if (!(error instanceof AuthenticationError)) throw error;
      await this.login();
      return fn();
    }
  }

  private async login(): Promise<void> {
    const anonymous = new Hub({ baseUrl: this.stack.hub_url });
    const { email, password } = this.stack.participant;
    try {
      this.token = unwrap(
        await anonymous.raw.POST('/api/v1/auth/login', { body: { email, password } }),
      ).token;
      this.refreshed = true;
    } catch (error) {
      const why = error instanceof APIError ? `${error.status} ${error.code}` : (error as Error).message;
      throw new DemoError(
        `the participant token expired and signing in as ${email} failed (${why}): restart \`pnpm start\` to reseed the stack`,
      );
    }
  }
}
