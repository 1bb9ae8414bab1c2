/**
 * Manifest drift: infra/docker-compose.yml (with infra/.env.example) and every kustomization under infra/k8s,
 * rendered by `kubectl kustomize`, checked against each app's own env schema (apps/<app>/src/env.ts) and
 * against each other (issuer, internal URLs and ports).
 *
 * Secrets are not in these files. Where a manifest takes a value from a Secret (secretKeyRef, envFrom
 * secretRef), from infra/.env (a value the example leaves empty for the operator) or from the env file a
 * compose setup service writes, the check substitutes a syntactically valid dummy of the shape the
 * variable's name promises (a PostgreSQL URL, `k1:<32 bytes base64>`, a 50-character token…), so the app's
 * schema still parses it. The keys of each Kubernetes Secret are those the secret instructions
 * (infra/k8s/README.md) tell the operator to create: a key missing there is missing in the cluster.
 */
import { parse, parseDocument, stringify } from 'yaml';
import { checkDeployment } from './check';
import { readCompose } from './compose';
import { readKubernetes } from './kubernetes';
import type { Deployment } from './model';
import { deploymentsOf, readInfraFiles, type InfraFiles } from './repo';
import { secretsFromInstructions } from './secrets';

/** Parsed manifests of arbitrary shape, edited in place to re-introduce a defect. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Yaml = Record<string, any>;

let files: InfraFiles;
beforeAll(() => {
  files = readInfraFiles();
}, 120_000);

const PROD = 'infra/k8s/overlays/prod';
const DEV = 'infra/k8s/overlays/dev';

function compose(overrides: Partial<Pick<InfraFiles, 'composeText' | 'envExampleText'>> = {}): Deployment {
  return readCompose({
    composeText: overrides.composeText ?? files.composeText,
    envExampleText: overrides.envExampleText ?? files.envExampleText,
  });
}

function kube(dir: string, overrides: { rendered?: string; secretInstructions?: string } = {}): Deployment {
  return readKubernetes({
    origin: `kustomize ${dir}`,
    rendered: overrides.rendered ?? files.rendered.get(dir)!,
    secrets: secretsFromInstructions(overrides.secretInstructions ?? files.secretInstructions),
  });
}

/** The rendered manifests with `edit` applied to every document. */
function editRendered(dir: string, edit: (object: Yaml) => void): string {
  return files.rendered
    .get(dir)!
    .split(/^---$/m)
    .map((text) => {
      const object = parse(text) as Yaml | null;
      if (!object) return text;
      edit(object);
      return stringify(object);
    })
    .join('---\n');
}

function editCompose(edit: (services: Yaml) => void): string {
  const doc = parseDocument(files.composeText);
  const plain = doc.toJS({ maxAliasCount: -1 }) as { services: Yaml };
  edit(plain.services);
  return stringify(plain);
}

/**
 * Probes that tell busy from broken (decision 110): a readiness check gets as long as HAProxy's (3 s), and the
 * liveness check 10 s, so a process that answers late under a burst (7.5 s measured on a 2-CPU host) is not
 * restarted with every request it holds; the Kubernetes default of 1 s would do both.
 */
function expectBusyTolerantProbes(container: Yaml): void {
  expect(container.readinessProbe.timeoutSeconds).toBeGreaterThanOrEqual(3);
  expect(container.livenessProbe.timeoutSeconds).toBeGreaterThanOrEqual(10);
}

describe('the deployment files as they are', () => {
  test('every kustomization renders: the base, the dev and prod overlays, the Job folders', () => {
    expect([...files.rendered.keys()]).toEqual(
      expect.arrayContaining([
        'infra/k8s/base',
        DEV,
        PROD,
        `${PROD}/migrations`,
        'infra/k8s/migrations',
        'infra/k8s/bootstrap',
      ]),
    );
  });

  test('compose and every rendered kustomization pass every check', () => {
    const problems = deploymentsOf(files).flatMap((deployment) => checkDeployment(deployment));
    expect(problems).toEqual([]);
  });

  test('compose runs every deployable, the reference agent included, and the relay gets its key from setup', () => {
    const deployment = compose();
    const apps = new Set(deployment.workloads.map((w) => `${w.app} ${w.entry}`));
    for (const expected of [
      'hub-api main',
      'hub-api migrate',
      'hub-api bootstrap',
      'workflow-api main',
      'workflow-api worker',
      'workflow-api migrate',
      'relay main',
      'console-router main',
      'reference-agent main',
      'control-web main',
    ])
      expect(apps).toContain(expected);
    const relay = deployment.workloads.find((w) => w.app === 'relay')!;
    expect([...relay.placeholders]).toEqual(
      expect.arrayContaining(['SVC_WORKSPACE', 'SVC_WORKSPACE_API_KEY', 'SVC_RELAY_TOKEN']),
    );
    const services = parse(files.composeText).services as Yaml;
    // Nothing the stack needs sits behind a profile that `up` would skip.
    expect(Object.entries(services).filter(([, s]) => s.profiles)).toEqual([]);
    expect(services.relay.depends_on['runtime-setup'].condition).toBe('service_completed_successfully');
    expect(services['runtime-setup'].depends_on['hub-bootstrap'].condition).toBe(
      'service_completed_successfully',
    );
  });

  test('dev runs everything of the base; prod leaves relay and console-router to the runtime hosts', () => {
    const served = (dir: string) =>
      kube(dir)
        .workloads.filter((w) => w.entry === 'main' || w.entry === 'worker')
        .map((w) => w.name)
        .sort();
    expect(served(DEV)).toEqual([
      'Deployment/console-router',
      'Deployment/control-web',
      'Deployment/hub-api',
      'Deployment/relay',
      'Deployment/workflow-api',
      'Deployment/workflow-worker',
    ]);
    expect(served(PROD)).toEqual([
      'Deployment/control-web',
      'Deployment/hub-api',
      'Deployment/workflow-api',
      'Deployment/workflow-worker',
    ]);
  });

  test('base: the console router runs two replicas, ready on /readyz, with a PodDisruptionBudget and the hub’s announcements', () => {
    const objects = files.rendered
      .get('infra/k8s/base')!
      .split(/^---$/m)
      .map((text) => parse(text) as Yaml | null)
      .filter((o): o is Yaml => o !== null);
    const deployment = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'console-router')!;
    expect(deployment.spec.replicas).toBeGreaterThanOrEqual(2);
    expect(deployment.spec.strategy.rollingUpdate.maxUnavailable).toBe(0);
    // With a loopback Host: the router refuses the pod IP the kubelet would send.
    for (const [probe, path] of [
      ['readinessProbe', '/readyz'],
      ['livenessProbe', '/healthz'],
    ] as const)
      expect(deployment.spec.template.spec.containers[0][probe].httpGet).toEqual({
        path,
        port: 'http',
        httpHeaders: [{ name: 'Host', value: 'localhost' }],
      });
    const pdb = objects.find((o) => o.kind === 'PodDisruptionBudget' && o.metadata.name === 'console-router');
    expect(pdb?.spec.selector.matchLabels).toEqual(deployment.spec.selector.matchLabels);
    expect(pdb?.spec.maxUnavailable).toBe(1);
    const router = kube('infra/k8s/base').workloads.find((w) => w.name === 'Deployment/console-router')!;
    expect(router.placeholders).toContain('CONSOLE_ROUTER_REDIS_URL');
    // prod leaves routers to the runtime hosts: no budget for pods that do not exist.
    expect(files.rendered.get(PROD)).not.toMatch(/name: console-router/);
  });

  test('base and dev: every stateless service runs two replicas or more, ready on /readyz, rolled one new pod at a time, with a PodDisruptionBudget', () => {
    for (const dir of ['infra/k8s/base', DEV]) {
      const objects = files.rendered
        .get(dir)!
        .split(/^---$/m)
        .map((text) => parse(text) as Yaml | null)
        .filter((o): o is Yaml => o !== null);
      const stateless = objects.filter((o) => o.kind === 'Deployment' && o.metadata.name !== 'relay');
      expect(stateless.map((d) => d.metadata.name).sort()).toEqual([
        'console-router',
        'control-web',
        'hub-api',
        'workflow-api',
        'workflow-worker',
      ]);
      for (const deployment of stateless) {
        expect(deployment.spec.replicas).toBeGreaterThanOrEqual(2);
        expect(deployment.spec.strategy.rollingUpdate).toEqual({ maxSurge: 1, maxUnavailable: 0 });
        expect(deployment.spec.template.spec.containers[0].readinessProbe.httpGet.path).toBe('/readyz');
        expectBusyTolerantProbes(deployment.spec.template.spec.containers[0]);
        const pdb = objects.find(
          (o) => o.kind === 'PodDisruptionBudget' && o.metadata.name === deployment.metadata.name,
        );
        expect(pdb?.spec.selector.matchLabels).toEqual(deployment.spec.selector.matchLabels);
        expect(pdb?.spec.maxUnavailable).toBe(1);
      }
    }
  });

  test('prod: replicas, resources, probes, external Postgres and Redis by Secret, migrations first, a PDB and an HPA per stateless service', () => {
    const objects = files.rendered
      .get(PROD)!
      .split(/^---$/m)
      .map((text) => parse(text) as Yaml | null)
      .filter((o): o is Yaml => o !== null);
    const deployments = objects.filter((o) => o.kind === 'Deployment');
    expect(deployments.map((d) => d.metadata.name).sort()).toEqual([
      'control-web',
      'hub-api',
      'workflow-api',
      'workflow-worker',
    ]);
    for (const deployment of deployments) {
      const name = deployment.metadata.name as string;
      expect(deployment.spec.replicas).toBeGreaterThanOrEqual(2);
      for (const container of deployment.spec.template.spec.containers) {
        expect(container.resources.requests.cpu).toBeDefined();
        expect(container.resources.requests.memory).toBeDefined();
        expect(container.resources.limits.memory).toBeDefined();
        expect(container.readinessProbe.httpGet.path).toBe('/readyz');
        expect(container.livenessProbe.httpGet.path).toBe('/healthz');
        expectBusyTolerantProbes(container);
      }
      const pdb = objects.find((o) => o.kind === 'PodDisruptionBudget' && o.metadata.name === name);
      expect(pdb?.spec.selector.matchLabels).toEqual(deployment.spec.selector.matchLabels);
      const hpa = objects.find((o) => o.kind === 'HorizontalPodAutoscaler' && o.metadata.name === name);
      expect(hpa?.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name });
      expect(hpa?.spec.minReplicas).toBeGreaterThanOrEqual(2);
      // The pod applies its own image's migrations before it serves (control-web has no database).
      if (name === 'control-web') {
        expect(deployment.spec.template.spec.initContainers).toBeUndefined();
        continue;
      }
      const init = deployment.spec.template.spec.initContainers?.[0];
      expect(init?.command).toEqual(['node', 'dist/migrate.js']);
      expect(init?.image).toBe(deployment.spec.template.spec.containers[0].image);
    }
    // No database or Redis runs in the cluster; their URLs come only from Secrets.
    expect(objects.filter((o) => o.kind === 'StatefulSet')).toEqual([]);
    for (const workload of kube(PROD).workloads) {
      if (workload.env.DATABASE_URL !== undefined) expect(workload.placeholders).toContain('DATABASE_URL');
      if (workload.env.REDIS_URL !== undefined) expect(workload.placeholders).toContain('REDIS_URL');
    }
    const jobs = kube(`${PROD}/migrations`).workloads;
    expect(jobs.map((w) => `${w.name} ${w.entry}`).sort()).toEqual([
      'Job/hub-api-migrate migrate',
      'Job/workflow-api-migrate migrate',
    ]);
  });
});

describe('each defect of the issue, re-introduced, fails the check', () => {
  const failing = (deployment: Deployment, pattern: RegExp) => {
    const problems = checkDeployment(deployment);
    expect(problems.some((problem) => pattern.test(problem))).toBe(true);
  };

  test('compose: HUB_ISSUER missing for the Workflow API', () => {
    const composeText = editCompose((services) => {
      delete services['workflow-api'].environment.HUB_ISSUER;
      delete services['workflow-worker'].environment.HUB_ISSUER;
    });
    failing(compose({ composeText }), /workflow-api .*trusts issuer http:\/\/hub-api:4000.*HUB_PUBLIC_URL/);
  });

  test('every overlay: HUB_ISSUER missing for the Workflow API', () => {
    for (const dir of ['infra/k8s/base', DEV, PROD]) {
      const rendered = editRendered(dir, (object) => {
        if (object.kind === 'ConfigMap' && object.metadata.name === 'workflow-api')
          delete object.data.HUB_ISSUER;
      });
      failing(kube(dir, { rendered }), /Deployment\/workflow-api .*trusts issuer http:\/\/hub-api:4000/);
    }
  });

  test('every overlay: HUB_ISSUER that is not the hub public URL', () => {
    const rendered = editRendered(PROD, (object) => {
      if (object.kind === 'ConfigMap' && object.metadata.name === 'workflow-api')
        object.data.HUB_ISSUER = 'https://hub.internal.example.com';
    });
    failing(kube(PROD, { rendered }), /trusts issuer https:\/\/hub\.internal\.example\.com/);
  });

  test('compose: WORKFLOW_ENCRYPTION_KEYS missing from the services', () => {
    const composeText = editCompose((services) => {
      delete services['workflow-api'].environment.WORKFLOW_ENCRYPTION_KEYS;
      delete services['workflow-worker'].environment.WORKFLOW_ENCRYPTION_KEYS;
    });
    failing(compose({ composeText }), /WORKFLOW_ENCRYPTION_KEYS is not set; .*delivery_not_configured/);
  });

  test('compose: WORKFLOW_ENCRYPTION_KEYS missing from .env.example', () => {
    const envExampleText = files.envExampleText.replace(/^WORKFLOW_ENCRYPTION_KEYS=.*$/m, '');
    expect(envExampleText).not.toEqual(files.envExampleText);
    failing(compose({ envExampleText }), /\$\{WORKFLOW_ENCRYPTION_KEYS\} is not in infra\/\.env\.example/);
  });

  test('every overlay: WORKFLOW_ENCRYPTION_KEYS missing from the secret instructions', () => {
    const secretInstructions = files.secretInstructions.replace(
      /^.*--from-literal=WORKFLOW_ENCRYPTION_KEYS=.*$/m,
      '',
    );
    expect(secretInstructions).not.toEqual(files.secretInstructions);
    for (const dir of ['infra/k8s/base', DEV, PROD])
      failing(
        kube(dir, { secretInstructions }),
        /Deployment\/workflow-api .*WORKFLOW_ENCRYPTION_KEYS is not set/,
      );
  });

  test('compose: the relay without its workspace key from setup never becomes ready', () => {
    const composeText = editCompose((services) => {
      delete services.relay['x-env-from-setup'];
    });
    failing(compose({ composeText }), /relay .*SVC_WORKSPACE_API_KEY is not set/);
  });

  test('compose and the base: a console router without its host id, key and console secret never becomes ready', () => {
    const composeText = editCompose((services) => {
      delete services['console-router']['x-env-from-setup'];
    });
    failing(compose({ composeText }), /console-router .*CONSOLE_ROUTER_UPSTREAM_SECRET is not set/);
    const secretInstructions = files.secretInstructions.replace(
      /create secret generic console-router/,
      'create secret generic other',
    );
    failing(
      kube('infra/k8s/base', { secretInstructions }),
      /Secret console-router is not created by the secret instructions/,
    );
  });

  test('a value the app schema refuses', () => {
    const composeText = editCompose((services) => {
      services['hub-api'].environment.HUB_DB_POOL_SIZE = '0';
    });
    failing(compose({ composeText }), /hub-api .*invalid configuration: .*HUB_DB_POOL_SIZE/);
  });

  test('an internal URL to the wrong port or the wrong service, a listener on 127.0.0.1', () => {
    const composeText = editCompose((services) => {
      services['workflow-api'].environment.HUB_URL = 'http://hub-api:4100';
      services['reference-agent'].environment.WORKFLOW_URL = 'http://hub-api:4000';
      services['console-router'].environment.CONSOLE_ROUTER_HOST = '127.0.0.1';
    });
    const problems = checkDeployment(compose({ composeText }));
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /HUB_URL=http:\/\/hub-api:4100 lands on port 4100, but hub-api listens on 4000/,
        ),
        expect.stringMatching(/WORKFLOW_URL=http:\/\/hub-api:4000 reaches hub-api, not workflow-api/),
        expect.stringMatching(/CONSOLE_ROUTER_HOST is 127\.0\.0\.1/),
      ]),
    );
  });

  test('a Service whose port lands on another port than the app listens on', () => {
    const rendered = editRendered(PROD, (object) => {
      if (object.kind === 'ConfigMap' && object.metadata.name === 'hub-api') object.data.HUB_PORT = '4001';
    });
    failing(kube(PROD, { rendered }), /hub-api .*readinessProbe is 4000, but HUB_PORT is 4001/);
  });
});

describe('the control web app', () => {
  const BASE = 'infra/k8s/base';
  const failing = (deployment: Deployment, pattern: RegExp) => {
    const problems = checkDeployment(deployment);
    expect(problems.filter((problem) => pattern.test(problem))).not.toEqual([]);
  };
  const objectsOf = (dir: string): Yaml[] =>
    files.rendered
      .get(dir)!
      .split(/^---$/m)
      .map((text) => parse(text) as Yaml | null)
      .filter((o): o is Yaml => o !== null);
  const editConfigMap = (dir: string, name: string, edit: (data: Record<string, string>) => void) =>
    editRendered(dir, (object) => {
      if (object.kind === 'ConfigMap' && object.metadata.name === name) edit(object.data);
    });

  test('every overlay: probes on /healthz and /readyz, resources, the session keys from its Secret, the same hardening as the others; prod is https with replicas, a PDB and an HPA', () => {
    for (const dir of [BASE, DEV, PROD]) {
      const objects = objectsOf(dir);
      const deployment = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'control-web')!;
      const pod = deployment.spec.template.spec;
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
      expect(pod.automountServiceAccountToken).toBe(false);
      const [container] = pod.containers;
      expect(container.command).toEqual(['node', 'dist/main.js']);
      expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
      expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
      expect(container.resources.requests.cpu).toBeDefined();
      expect(container.resources.limits.memory).toBeDefined();
      expect(container.securityContext).toEqual({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      });
      const service = objects.find((o) => o.kind === 'Service' && o.metadata.name === 'control-web')!;
      expect(service.spec.ports).toEqual([{ name: 'http', port: 4200, targetPort: 'http' }]);
      const workload = kube(dir).workloads.find((w) => w.app === 'control-web')!;
      expect(workload.placeholders).toEqual(new Set(['CONTROL_WEB_SESSION_KEYS']));
    }
    const prod = objectsOf(PROD);
    const web = kube(PROD).workloads.find((w) => w.app === 'control-web')!;
    expect(new URL(web.env.CONTROL_WEB_PUBLIC_URL!).protocol).toBe('https:');
    expect(web.env.CONTROL_WEB_TRUST_PROXY).toBe('1');
    const deployment = prod.find((o) => o.kind === 'Deployment' && o.metadata.name === 'control-web')!;
    expect(deployment.spec.replicas).toBeGreaterThanOrEqual(2);
    expect(deployment.spec.template.spec.containers[0].startupProbe.httpGet.path).toBe('/healthz');
    const pdb = prod.find((o) => o.kind === 'PodDisruptionBudget' && o.metadata.name === 'control-web');
    expect(pdb?.spec.selector.matchLabels).toEqual(deployment.spec.selector.matchLabels);
    const hpa = prod.find((o) => o.kind === 'HorizontalPodAutoscaler' && o.metadata.name === 'control-web');
    expect(hpa?.spec.minReplicas).toBeGreaterThanOrEqual(2);
  });

  test('compose: published on 127.0.0.1:4200, the session keys from infra/.env, after the hub and the Workflow API; the router accepts its pages', () => {
    const services = parseDocument(files.composeText).toJS({ maxAliasCount: -1 }).services as Yaml;
    const web = services['control-web'];
    expect(web.ports).toEqual(['127.0.0.1:4200:4200']);
    expect(web.environment.CONTROL_WEB_SESSION_KEYS).toMatch(/^\$\{CONTROL_WEB_SESSION_KEYS:\?/);
    expect(web.depends_on['hub-api'].condition).toBe('service_healthy');
    expect(web.depends_on['workflow-api'].condition).toBe('service_healthy');
    // No committed key: the example leaves it for the operator.
    expect(files.envExampleText).toMatch(/^CONTROL_WEB_SESSION_KEYS=$/m);
    const workload = compose().workloads.find((w) => w.app === 'control-web')!;
    expect(workload.placeholders).toContain('CONTROL_WEB_SESSION_KEYS');
    const router = compose().workloads.find((w) => w.app === 'console-router')!;
    expect(router.env.CONSOLE_ROUTER_ALLOWED_ORIGINS).toBe(workload.env.CONTROL_WEB_PUBLIC_URL);
  });

  test('the session keys missing: from infra/.env.example, from the compose service, from the Secret instructions', () => {
    const envExampleText = files.envExampleText.replace(/^CONTROL_WEB_SESSION_KEYS=.*$/m, '');
    expect(envExampleText).not.toEqual(files.envExampleText);
    failing(compose({ envExampleText }), /\$\{CONTROL_WEB_SESSION_KEYS\} is not in infra\/\.env\.example/);
    const composeText = editCompose((services) => {
      delete services['control-web'].environment.CONTROL_WEB_SESSION_KEYS;
    });
    failing(compose({ composeText }), /control-web .*invalid configuration: .*CONTROL_WEB_SESSION_KEYS/);
    const secretInstructions = files.secretInstructions.replace(
      /--from-literal=CONTROL_WEB_SESSION_KEYS=/,
      '--from-literal=CONTROL_WEB_SESSION_KEY=',
    );
    expect(secretInstructions).not.toEqual(files.secretInstructions);
    for (const dir of [BASE, DEV, PROD]) {
      const problems = checkDeployment(kube(dir, { secretInstructions }));
      expect(problems).toEqual(
        expect.arrayContaining([
          expect.stringMatching(
            /Deployment\/control-web .*invalid configuration: .*CONTROL_WEB_SESSION_KEYS/,
          ),
        ]),
      );
    }
  });

  test('a misspelt or missing setting: CONTROL_WEB_PUBLIC_URI for …_URL, a console router setting misspelt', () => {
    const rendered = editConfigMap(PROD, 'control-web', (data) => {
      data.CONTROL_WEB_PUBLIC_URI = data.CONTROL_WEB_PUBLIC_URL!;
      delete data.CONTROL_WEB_PUBLIC_URL;
    });
    const problems = checkDeployment(kube(PROD, { rendered }));
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/control-web .*CONTROL_WEB_PUBLIC_URI is not a setting of control-web/),
        expect.stringMatching(/control-web .*CONTROL_WEB_PUBLIC_URL is not set; .*Secure/),
      ]),
    );
    const composeText = editCompose((services) => {
      const env = services['console-router'].environment;
      env.CONSOLE_ROUTER_ALLOWED_ORIGIN = env.CONSOLE_ROUTER_ALLOWED_ORIGINS;
      delete env.CONSOLE_ROUTER_ALLOWED_ORIGINS;
    });
    failing(compose({ composeText }), /CONSOLE_ROUTER_ALLOWED_ORIGIN is not a setting of console-router/);
  });

  test('values the app refuses or that cannot work: a console origin with a path, http in production, URLs to the wrong service or port, a listener on 127.0.0.1', () => {
    failing(
      kube(DEV, {
        rendered: editConfigMap(DEV, 'control-web', (data) => {
          data.CONTROL_WEB_CONSOLE_ORIGINS = 'http://localhost:8790/consoles';
        }),
      }),
      /control-web .*invalid configuration: .*CONTROL_WEB_CONSOLE_ORIGINS/,
    );
    failing(
      kube(PROD, {
        rendered: editConfigMap(PROD, 'control-web', (data) => {
          data.CONTROL_WEB_PUBLIC_URL = 'http://control.example.com';
        }),
      }),
      /CONTROL_WEB_PUBLIC_URL http:\/\/control\.example\.com is not https/,
    );
    const composeText = editCompose((services) => {
      const env = services['control-web'].environment;
      env.CONTROL_WEB_HUB_URL = 'http://hub-api:4100';
      env.CONTROL_WEB_WORKFLOW_URL = 'http://hub-api:4000';
      env.CONTROL_WEB_HOST = '127.0.0.1';
    });
    const problems = checkDeployment(compose({ composeText }));
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /CONTROL_WEB_HUB_URL=http:\/\/hub-api:4100 lands on port 4100, but hub-api listens on 4000/,
        ),
        expect.stringMatching(
          /CONTROL_WEB_WORKFLOW_URL=http:\/\/hub-api:4000 reaches hub-api, not workflow-api/,
        ),
        expect.stringMatching(/CONTROL_WEB_HOST is 127\.0\.0\.1/),
      ]),
    );
    failing(
      kube(PROD, {
        rendered: editConfigMap(PROD, 'control-web', (data) => {
          data.CONTROL_WEB_PORT = '4201';
        }),
      }),
      /Deployment\/control-web .*readinessProbe is 4200, but CONTROL_WEB_PORT is 4201/,
    );
  });

  test('the console router refuses its pages, or its page policy blocks the router', () => {
    // The base's router without the control web app's origin.
    failing(
      kube(BASE, {
        rendered: editConfigMap(BASE, 'console-router', (data) => {
          delete data.CONSOLE_ROUTER_ALLOWED_ORIGINS;
        }),
      }),
      /Deployment\/console-router: refuses pages of the control web app's origin https:\/\/control\.example\.com/,
    );
    // Compose served on a real hostname, the router setting left out.
    const envExampleText = files.envExampleText.replace(
      /^CONTROL_WEB_PUBLIC_URL=.*$/m,
      'CONTROL_WEB_PUBLIC_URL=https://control.example.com',
    );
    const composeText = editCompose((services) => {
      delete services['console-router'].environment.CONSOLE_ROUTER_ALLOWED_ORIGINS;
    });
    failing(
      compose({ composeText, envExampleText }),
      /console-router: refuses pages of the control web app's origin/,
    );
    expect(checkDeployment(compose({ envExampleText }))).toEqual([]);
    // The page's policy without the router's public origin.
    failing(
      kube(DEV, {
        rendered: editConfigMap(DEV, 'control-web', (data) => {
          delete data.CONTROL_WEB_CONSOLE_ORIGINS;
        }),
      }),
      /CONTROL_WEB_CONSOLE_ORIGINS does not list the console router's public origin http:\/\/localhost:8790/,
    );
  });
});
