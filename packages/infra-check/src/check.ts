/**
 * The checks on one deployment (compose, or one rendered kustomization):
 * - every svc container's environment parses with its app's own loader, and the settings a deployment
 *   cannot do without (optional in the schema) are set;
 * - every listening service binds 0.0.0.0 and is reached (published, probed, targeted by a Service) on
 *   the port it listens on;
 * - issuer and URLs agree between services: whoever verifies the hub's tokens trusts the hub's public URL
 *   as issuer; every hub URL and Workflow API URL reaches the hub's / the Workflow API's port, or is its
 *   public URL; the hub announces the Workflow API's own public URL; the API and the worker share their
 *   database, Redis and queue prefix;
 * - the control web app is opened over https (unless on a loopback name), every console router of the
 *   deployment accepts its pages as `Origin` (the router's own rule), and its page's policy allows every
 *   router's public origin.
 */
import { APPS, type Facts } from './apps';
import type { Deployment, Workload } from './model';

function normalize(url: string): string {
  try {
    const parsed = new URL(url);
    return parsed.href.replace(/\/+$/, '');
  } catch {
    return url;
  }
}

/** A hostname that names the machine itself, where a browser keeps a non-Secure cookie to itself. */
function isLoopbackName(hostname: string): boolean {
  return (
    hostname === 'localhost' ||
    hostname.endsWith('.localhost') ||
    hostname === '[::1]' ||
    /^127(\.\d{1,3}){3}$/.test(hostname)
  );
}

function portOf(url: URL): number {
  if (url.port) return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

interface Parsed {
  workload: Workload;
  facts: Facts;
}

export function checkDeployment(deployment: Deployment): string[] {
  const problems = [...deployment.problems];
  const parsed: Parsed[] = [];
  for (const workload of deployment.workloads) {
    const where = `${workload.origin} ${workload.name} (${workload.app} ${workload.entry})`;
    const spec = APPS[workload.app][workload.entry];
    if (!spec) {
      if (workload.app !== 'svc-cli')
        problems.push(`${where}: ${workload.app} has no ${workload.entry} entry point`);
      continue;
    }
    let facts: Facts;
    try {
      facts = spec.parse(workload.env);
    } catch (error) {
      problems.push(`${where}: ${(error as Error).message}`);
      continue;
    }
    for (const [variable, why] of Object.entries(spec.requiredToDeploy))
      if (!workload.env[variable]) problems.push(`${where}: ${variable} is not set; ${why}`);
    if (spec.settings)
      for (const variable of Object.keys(workload.env))
        if (variable.startsWith(spec.settings.prefix) && !spec.settings.known.includes(variable))
          problems.push(
            `${where}: ${variable} is not a setting of ${workload.app} (misspelt?); the app ignores it`,
          );
    if (facts.listen) {
      if (facts.listen.host !== '0.0.0.0')
        problems.push(
          `${where}: ${facts.listen.hostVar} is ${facts.listen.host}; only 0.0.0.0 is reachable from outside the container`,
        );
      for (const port of workload.ports)
        if (port.port !== facts.listen.port)
          problems.push(
            `${where}: ${port.what} is ${port.port}, but ${facts.listen.portVar} is ${facts.listen.port}`,
          );
    }
    parsed.push({ workload, facts });
  }

  const hubs = parsed.filter((p) => p.facts.hubPublicUrl !== undefined);
  const hubPublicUrls = new Set(hubs.map((p) => normalize(p.facts.hubPublicUrl!)));
  if (hubPublicUrls.size > 1)
    problems.push(
      `${deployment.origin}: hub-api workloads disagree on HUB_PUBLIC_URL (${[...hubPublicUrls].join(', ')})`,
    );
  const hubPublicUrl = [...hubPublicUrls][0];
  const workflowApis = parsed.filter((p) => p.workload.app === 'workflow-api' && p.workload.entry === 'main');
  const workflowPublicUrls = new Set(workflowApis.map((p) => normalize(p.facts.workflowPublicUrl!)));
  if (workflowPublicUrls.size > 1)
    problems.push(`${deployment.origin}: workflow-api workloads disagree on WORKFLOW_PUBLIC_URL`);
  const workflowPublicUrl = [...workflowPublicUrls][0];

  /** The workload a URL reaches inside this deployment, with the port the traffic lands on. */
  const reach = (raw: string): { workload: Parsed; port: number } | undefined => {
    const url = new URL(raw);
    const port = portOf(url);
    const endpoint = deployment.endpoints.find(
      (e) => e.host === url.hostname && (e.port === -1 || e.port === port),
    );
    if (!endpoint) return undefined;
    // A pod may also run one-shot init containers (migrations); the traffic goes to its serving container.
    const candidates = parsed.filter((p) => p.workload.name === endpoint.workload);
    const workload = candidates.find((p) => p.facts.listen !== undefined) ?? candidates[0];
    return workload ? { workload, port: endpoint.port === -1 ? port : endpoint.targetPort } : undefined;
  };

  const pointsAt = (
    where: string,
    target: { variable: string; url: string },
    app: 'hub-api' | 'workflow-api',
    publicUrl: string | undefined,
  ) => {
    if (publicUrl !== undefined && new URL(target.url).origin === new URL(publicUrl).origin) return;
    const reached = reach(target.url);
    if (!reached) {
      problems.push(
        `${where}: ${target.variable}=${target.url} reaches no service of this deployment and is not the ${app} public URL`,
      );
      return;
    }
    const { workload, port } = reached;
    if (workload.workload.app !== app || workload.workload.entry !== 'main')
      problems.push(
        `${where}: ${target.variable}=${target.url} reaches ${workload.workload.name}, not ${app}`,
      );
    else if (workload.facts.listen && workload.facts.listen.port !== port)
      problems.push(
        `${where}: ${target.variable}=${target.url} lands on port ${port}, but ${app} listens on ${workload.facts.listen.port}`,
      );
  };

  for (const { workload, facts } of parsed) {
    const where = `${workload.origin} ${workload.name} (${workload.app} ${workload.entry})`;
    if (facts.hubUrl && hubs.length > 0) pointsAt(where, facts.hubUrl, 'hub-api', hubPublicUrl);
    if (facts.workflowUrl && workflowApis.length > 0)
      pointsAt(where, facts.workflowUrl, 'workflow-api', workflowPublicUrl);
    if (facts.issuer !== undefined && hubPublicUrl !== undefined && normalize(facts.issuer) !== hubPublicUrl)
      problems.push(
        `${where}: trusts issuer ${facts.issuer} (HUB_ISSUER, else its hub URL), but the hub signs with HUB_PUBLIC_URL ${hubPublicUrl}; every token would be refused`,
      );
  }

  if (workflowPublicUrl !== undefined)
    for (const hub of hubs)
      if (normalize(hub.facts.workflowPublicUrl!) !== workflowPublicUrl)
        problems.push(
          `${hub.workload.origin} ${hub.workload.name}: HUB_WORKFLOW_PUBLIC_URL ${hub.facts.workflowPublicUrl} is not the Workflow API's WORKFLOW_PUBLIC_URL ${workflowPublicUrl}`,
        );

  // The service token the hub expects is the one workflow-api presents (values are comparable unless both
  // are placeholders from separate Secrets).
  const hubToken = hubs.find((h) => !h.workload.placeholders.has('HUB_SERVICE_TOKEN'))?.workload.env
    .HUB_SERVICE_TOKEN;
  for (const p of parsed.filter((q) => q.workload.app === 'workflow-api' && q.workload.entry !== 'migrate'))
    if (
      hubToken !== undefined &&
      !p.workload.placeholders.has('HUB_SERVICE_TOKEN') &&
      p.workload.env.HUB_SERVICE_TOKEN !== hubToken
    )
      problems.push(`${p.workload.origin} ${p.workload.name}: HUB_SERVICE_TOKEN differs from hub-api's`);

  const webApps = parsed.filter((p) => p.facts.page !== undefined);
  const routers = parsed.filter((p) => p.facts.console !== undefined);
  for (const web of webApps) {
    const where = `${web.workload.origin} ${web.workload.name} (control-web)`;
    const page = web.facts.page!;
    const url = new URL(page.publicUrl);
    if (url.protocol !== 'https:' && !isLoopbackName(url.hostname))
      problems.push(
        `${where}: CONTROL_WEB_PUBLIC_URL ${page.publicUrl} is not https: the session cookie would not be Secure and sign-ins would cross the network in clear`,
      );
    for (const router of routers) {
      const rule = router.facts.console!;
      if (!rule.acceptsPage(page.publicUrl))
        problems.push(
          `${router.workload.origin} ${router.workload.name}: refuses pages of the control web app's origin ${page.publicUrl} (list it in CONSOLE_ROUTER_ALLOWED_ORIGINS), so its consoles and terminals would not open`,
        );
      if (rule.publicOrigin !== undefined && !page.consoleOrigins.includes(rule.publicOrigin))
        problems.push(
          `${where}: CONTROL_WEB_CONSOLE_ORIGINS does not list the console router's public origin ${rule.publicOrigin}, so the page's Content-Security-Policy blocks its consoles`,
        );
    }
  }

  const workflowProcesses = parsed.filter(
    (p) =>
      p.workload.app === 'workflow-api' && (p.workload.entry === 'main' || p.workload.entry === 'worker'),
  );
  for (const variable of ['DATABASE_URL', 'REDIS_URL', 'WORKFLOW_QUEUE_PREFIX', 'WORKFLOW_ENCRYPTION_KEYS']) {
    const values = new Set(workflowProcesses.map((p) => p.workload.env[variable] ?? ''));
    if (values.size > 1)
      problems.push(`${deployment.origin}: workflow-api and its worker disagree on ${variable}`);
  }
  return problems;
}
