/**
 * Each app's own env loader (its package's `./env` export, apps/<app>/src/env.ts), and what the check needs to know about a parsed
 * configuration: where the process listens, how it reaches the hub and the Workflow API, which issuer it
 * trusts. Settings that the schema leaves optional but a deployment cannot do without are listed as
 * `requiredToDeploy`, each with the reason.
 */
import { loadHubConfig } from '@svc/hub-api/env';
import { loadWorkflowConfig } from '@svc/workflow-api/env';
import { loadRelayConfig } from '@svc/relay/env';
import { consoleRouterEnvSchema, loadConsoleRouterConfig } from '@svc/console-router/env';
import { isAllowedOrigin, originRules } from '@svc/console-router/request-origin';
import { loadReferenceAgentConfig } from '@svc/reference-agent/env';
import { controlWebEnvSchema, loadControlWebConfig } from '@svc/control-web/env';
import type { AppName, Entry } from './model';

export interface Facts {
  /** Listen host and port variables and their parsed values (absent for processes that do not listen). */
  listen?: { hostVar: string; host: string; portVar: string; port: number };
  /** The hub's public URL, the `iss` of every token it signs (hub only). */
  hubPublicUrl?: string;
  /** The Workflow API's public URL as this service announces it. */
  workflowPublicUrl?: string;
  /** How this service calls the hub / the Workflow API. */
  hubUrl?: { variable: string; url: string };
  workflowUrl?: { variable: string; url: string };
  /** The issuer this service accepts on the hub's tokens (its HUB_ISSUER, else its hub URL). */
  issuer?: string;
  /** Control web app: the origin people open it at, and the console router origins its page may call. */
  page?: { publicUrl: string; consoleOrigins: string[] };
  /** Console router: its public origin, and what its `Origin` rule says of a page's origin. */
  console?: { publicOrigin: string | undefined; acceptsPage(origin: string): boolean };
}

export interface EntrySpec {
  /** Parses the environment with the app's own loader; throws the app's ConfigError on a bad value. */
  parse(env: Record<string, string>): Facts;
  /** Optional in the schema, required in a deployment: variable → why. */
  requiredToDeploy: Record<string, string>;
  /**
   * The app's own prefix and every variable its schema reads: a variable with the prefix that the schema does
   * not read is a misspelling the app would silently ignore (the schema drops unknown keys).
   */
  settings?: { prefix: string; known: readonly string[] };
}

function urlCheck(protocols: string[]) {
  return (value: string | undefined): boolean => {
    try {
      return value !== undefined && protocols.includes(new URL(value).protocol);
    } catch {
      return false;
    }
  };
}
const isPostgresUrl = urlCheck(['postgres:', 'postgresql:']);

/**
 * The migrate and bootstrap entry points parse their few variables inline (not exported), so their
 * required variables are checked here: DATABASE_URL as a PostgreSQL URL, the BOOTSTRAP_* values present.
 */
function oneShot(required: string[]): EntrySpec {
  return {
    parse(env) {
      const problems: string[] = [];
      if (!isPostgresUrl(env.DATABASE_URL)) problems.push('DATABASE_URL: must be a PostgreSQL URL');
      for (const name of required) if (!env[name]) problems.push(`${name}: required`);
      if (problems.length > 0) throw new Error(`invalid configuration: ${problems.join('; ')}`);
      return {};
    },
    requiredToDeploy: {},
  };
}

const workflow = (portVar: 'WORKFLOW_PORT' | 'WORKFLOW_WORKER_PORT'): EntrySpec => ({
  parse(env) {
    const config = loadWorkflowConfig(env);
    return {
      listen: { hostVar: 'WORKFLOW_HOST', host: config.WORKFLOW_HOST, portVar, port: config[portVar] },
      workflowPublicUrl: config.WORKFLOW_PUBLIC_URL,
      hubUrl: { variable: 'HUB_URL', url: config.HUB_URL },
      issuer: config.HUB_ISSUER ?? config.HUB_URL,
    };
  },
  requiredToDeploy: {
    WORKFLOW_ENCRYPTION_KEYS:
      'without it creating a delivery subscription answers 503 delivery_not_configured',
  },
});

export const APPS: Record<AppName, Partial<Record<Entry, EntrySpec>>> = {
  'hub-api': {
    main: {
      parse(env) {
        const config = loadHubConfig(env);
        return {
          listen: { hostVar: 'HUB_HOST', host: config.HUB_HOST, portVar: 'HUB_PORT', port: config.HUB_PORT },
          hubPublicUrl: config.HUB_PUBLIC_URL,
          workflowPublicUrl: config.HUB_WORKFLOW_PUBLIC_URL,
        };
      },
      requiredToDeploy: {},
    },
    migrate: oneShot([]),
    bootstrap: oneShot([
      'BOOTSTRAP_WORKSPACE_SLUG',
      'BOOTSTRAP_WORKSPACE_NAME',
      'BOOTSTRAP_ADMIN_EMAIL',
      'BOOTSTRAP_ADMIN_PASSWORD',
    ]),
  },
  'workflow-api': {
    main: workflow('WORKFLOW_PORT'),
    worker: workflow('WORKFLOW_WORKER_PORT'),
    migrate: oneShot([]),
  },
  relay: {
    main: {
      parse(env) {
        const config = loadRelayConfig(env);
        return {
          listen: { hostVar: 'RELAY_HOST', host: config.host, portVar: 'RELAY_PORT', port: config.port },
          ...(config.hubUrl ? { hubUrl: { variable: 'SVC_HUB_URL', url: config.hubUrl } } : {}),
        };
      },
      requiredToDeploy: {
        SVC_HUB_URL: 'the relay is not ready (/readyz) without it',
        SVC_WORKSPACE: 'the relay is not ready (/readyz) without it',
        SVC_WORKSPACE_API_KEY: 'the relay is not ready (/readyz) without it',
        SVC_RELAY_TOKEN: 'the hub authenticates POST /spawn with it',
      },
    },
  },
  'console-router': {
    main: {
      parse(env) {
        const config = loadConsoleRouterConfig(env);
        return {
          listen: {
            hostVar: 'CONSOLE_ROUTER_HOST',
            host: config.host,
            portVar: 'CONSOLE_ROUTER_PORT',
            port: config.port,
          },
          hubUrl: { variable: 'HUB_URL', url: config.hubUrl },
          issuer: config.hubIssuer,
          console: {
            publicOrigin: config.publicBaseUrl ? new URL(config.publicBaseUrl).origin : undefined,
            acceptsPage: (origin) =>
              isAllowedOrigin(origin, originRules(config.publicBaseUrl, config.allowedOrigins)),
          },
        };
      },
      requiredToDeploy: {
        SVC_RUNTIME_INSTANCE_ID: 'the router is not ready (/readyz route_table) without its host id',
        SVC_WORKSPACE_API_KEY: 'the router is not ready (/readyz route_table) without the host key',
        CONSOLE_ROUTER_UPSTREAM_SECRET: 'the router is not ready (/readyz upstream_secret) without it',
      },
      settings: { prefix: 'CONSOLE_ROUTER_', known: Object.keys(consoleRouterEnvSchema.in.shape) },
    },
  },
  'reference-agent': {
    main: {
      parse(env) {
        const config = loadReferenceAgentConfig(env);
        return {
          hubUrl: { variable: 'HUB_URL', url: config.hubUrl },
          workflowUrl: { variable: 'WORKFLOW_URL', url: config.workflowUrl },
          issuer: config.hubIssuer,
        };
      },
      requiredToDeploy: {},
    },
  },
  'control-web': {
    main: {
      parse(env) {
        const config = loadControlWebConfig(env);
        return {
          listen: {
            hostVar: 'CONTROL_WEB_HOST',
            host: config.host,
            portVar: 'CONTROL_WEB_PORT',
            port: config.port,
          },
          hubUrl: { variable: 'CONTROL_WEB_HUB_URL', url: config.hubUrl },
          workflowUrl: { variable: 'CONTROL_WEB_WORKFLOW_URL', url: config.workflowUrl },
          page: { publicUrl: config.publicOrigin, consoleOrigins: config.consoleOrigins },
        };
      },
      requiredToDeploy: {
        CONTROL_WEB_PUBLIC_URL:
          'without it the app takes http://<CONTROL_WEB_HOST>:<port> as its address: the session cookie is never Secure and no HSTS is sent',
      },
      settings: { prefix: 'CONTROL_WEB_', known: Object.keys(controlWebEnvSchema.in.shape) },
    },
  },
  // The CLI image runs one-shot setup scripts; it has no env schema of its own.
  'svc-cli': {},
};

export function isAppName(name: string): name is AppName {
  return Object.prototype.hasOwnProperty.call(APPS, name);
}

/** The entry point a container command runs (`node dist/worker-main.js` → worker); `main` by default. */
export function entryOf(command: string[]): Entry {
  const text = command.join(' ');
  if (/dist\/worker-main\.js/.test(text)) return 'worker';
  if (/dist\/migrate\.js/.test(text)) return 'migrate';
  if (/dist\/bootstrap\.js/.test(text)) return 'bootstrap';
  return 'main';
}

/** `registry.example.com/svc/hub-api:0.2.0@sha256:…` → `hub-api`. */
export function appOfImage(image: string | undefined): AppName | undefined {
  if (!image) return undefined;
  const last = image.split('@')[0]!.split('/').pop()!.split(':')[0]!;
  return isAppName(last) ? last : undefined;
}
