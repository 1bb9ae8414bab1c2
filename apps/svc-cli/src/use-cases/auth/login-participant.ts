import { ApiError, createHubClient, unwrap } from '@svc/contracts';
import type { ProfileStore } from '../../data/profile-store';
import { ensureOwnerOnlyDir } from '../../data/secret-files';
import { promptHidden, promptLine, readAllStdin, stdinIsTerminal } from '../../data/account-prompts';
import { CliError, usageError } from '../../domain/cli-error';
import { EXIT } from '../../domain/exit-codes';
import { pullRuntimeConfig, runtimeInstanceIdFromEnv } from '../config/pull-runtime-config';
import type { PullRuntimeResult } from '../config/pull-runtime-config';

export interface LoginInput {
  hubUrl: string;
  workspace: string;
  email: string | undefined;
  passwordStdin: boolean;
  pullRuntime: boolean;
  /** With `pullRuntime`: issue a new runtime key even when the profile holds the current one. */
  rotateKey?: boolean;
  /** With `pullRuntime`: the overlap of a rotation, in seconds. */
  overlapSeconds?: number;
  store: ProfileStore;
  clientName: string;
  /** `SVC_RUNTIME_INSTANCE_ID`, for `--pull-runtime`. */
  runtimeInstanceIdEnv: string | undefined;
  progress: <R>(label: string, work: () => Promise<R>) => Promise<R>;
}

export interface LoginResult {
  hub_url: string;
  workspace: string;
  participant: { email: string; participant_id: string; expires_at: string };
  profile_path: string;
  runtime: PullRuntimeResult | null;
}

function normalizeHubUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw usageError(
      'hub_url_invalid',
      `--hub-url ${raw} is not a URL`,
      'pass the hub base URL, e.g. https://hub.example.com',
    );
  }
  if (
    (url.protocol !== 'https:' && url.protocol !== 'http:') ||
    url.username ||
    url.password ||
    url.search ||
    url.hash
  ) {
    throw usageError(
      'hub_url_invalid',
      '--hub-url must be an http(s) URL without credentials, query or fragment',
      'pass the hub base URL, e.g. https://hub.example.com',
    );
  }
  return url.toString().replace(/\/+$/, '');
}

async function readEmail(flag: string | undefined): Promise<string> {
  if (flag) return flag.trim();
  if (!stdinIsTerminal()) {
    throw usageError('email_required', 'no terminal to ask for the email', 'pass --email <address>');
  }
  const email = (await promptLine('Email: ')).trim();
  if (!email) throw usageError('email_required', 'no email given', 'pass --email <address>');
  return email;
}

async function readPassword(fromStdin: boolean): Promise<string> {
  let password: string;
  if (fromStdin) {
    if (stdinIsTerminal()) {
      throw usageError(
        'password_stdin_is_terminal',
        '--password-stdin needs the password piped in',
        'printf %s "$PASSWORD" | svc login … --password-stdin',
      );
    }
    password = (await readAllStdin()).replace(/\r?\n$/, '');
  } else if (stdinIsTerminal()) {
    password = await promptHidden('Password: ');
  } else {
    throw usageError(
      'password_required',
      'no terminal to ask for the password',
      'pipe it in with --password-stdin (a password is never a flag value)',
    );
  }
  if (!password)
    throw usageError('password_required', 'the password is empty', 'pipe it in with --password-stdin');
  return password;
}

/**
 * `svc login`: signs the participant in at the hub, checks the workspace is one they can access, and stores the
 * hub URL, workspace and participant token in the profile (0600). With `--pull-runtime` it then pulls the
 * runtime config as `svc config pull-runtime` does.
 */
export async function loginParticipant(input: LoginInput): Promise<LoginResult> {
  const hubUrl = normalizeHubUrl(input.hubUrl);
  const runtimeInstanceId = input.pullRuntime
    ? runtimeInstanceIdFromEnv(input.runtimeInstanceIdEnv)
    : undefined;
  const email = await readEmail(input.email);
  const password = await readPassword(input.passwordStdin);
  const anonymous = createHubClient({ baseUrl: hubUrl, clientName: input.clientName });
  const session = await input.progress(`Signing in to ${hubUrl}`, async () => {
    try {
      return unwrap(await anonymous.POST('/api/v1/auth/login', { body: { email, password } }));
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) {
        throw new CliError({
          code: 'invalid_credentials',
          message: 'the hub refused the email or password',
          fix: 'check the email and password (10 failures in a row lock the account for 15 minutes)',
          exit: EXIT.authRequired,
        });
      }
      throw error;
    }
  });
  const hub = createHubClient({ baseUrl: hubUrl, token: session.token, clientName: input.clientName });
  const workspaces = unwrap(await hub.GET('/api/v1/workspaces'));
  if (!workspaces.some((w) => w.slug === input.workspace)) {
    throw new CliError({
      code: 'workspace_not_accessible',
      message: `${email} is not a member of workspace "${input.workspace}"`,
      fix: `use one of: ${workspaces.map((w) => w.slug).join(', ') || '(none)'}; or ask an owner to add you`,
      exit: EXIT.authRequired,
    });
  }
  await ensureOwnerOnlyDir(input.store.paths.config_dir);
  const previous = await input.store.read();
  // A runtime config pulled for another hub or workspace does not belong to this login.
  const sameTarget = previous.hub_url === hubUrl && previous.workspace === input.workspace;
  await input.store.write({
    hub_url: hubUrl,
    workspace: input.workspace,
    participant: {
      email: session.participant.email,
      participant_id: session.participant.id,
      token: session.token,
      expires_at: session.expires_at,
    },
    ...(sameTarget && previous.runtime ? { runtime: previous.runtime } : {}),
  });
  if (!sameTarget) await input.store.resetRuntime();
  const runtime = input.pullRuntime
    ? await input.progress('Pulling the runtime config', () =>
        pullRuntimeConfig({
          hub,
          workspace: input.workspace,
          store: input.store,
          runtimeInstanceId,
          rotateKey: input.rotateKey,
          overlapSeconds: input.overlapSeconds,
        }),
      )
    : null;
  return {
    hub_url: hubUrl,
    workspace: input.workspace,
    participant: {
      email: session.participant.email,
      participant_id: session.participant.id,
      expires_at: session.expires_at,
    },
    profile_path: input.store.paths.profile_path,
    runtime,
  };
}
