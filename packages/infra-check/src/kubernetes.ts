/**
 * Reads the output of `kubectl kustomize <dir>`: every container running an svc image, with the environment it
 * would get (envFrom ConfigMaps and Secrets in order, then env entries), its container and probe ports, and
 * every Service as an endpoint. Secrets are not in the manifests: the keys of each Secret come from the
 * instructions that tell the operator to create it (secretsFromInstructions), and each value is a dummy of
 * its shape. A reference to a Secret or key those instructions never create is a problem.
 */
import { execFileSync } from 'node:child_process';
import { parseAllDocuments } from 'yaml';
import { appOfImage, entryOf } from './apps';
import type { Deployment, Endpoint, Workload } from './model';
import { dummySecret } from './secrets';

interface Port {
  name?: string;
  containerPort: number;
}
interface Probe {
  httpGet?: { port: number | string };
  tcpSocket?: { port: number | string };
}
interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  ports?: Port[];
  env?: Array<{
    name: string;
    value?: string;
    valueFrom?: {
      secretKeyRef?: { name: string; key: string; optional?: boolean };
      configMapKeyRef?: { name: string; key: string; optional?: boolean };
    };
  }>;
  envFrom?: Array<{
    prefix?: string;
    configMapRef?: { name: string; optional?: boolean };
    secretRef?: { name: string; optional?: boolean };
  }>;
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
}
interface PodSpec {
  containers?: Container[];
  initContainers?: Container[];
}
interface K8sObject {
  kind?: string;
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string> };
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  spec?: {
    template?: { metadata?: { labels?: Record<string, string> }; spec?: PodSpec };
    jobTemplate?: {
      spec?: { template?: { metadata?: { labels?: Record<string, string> }; spec?: PodSpec } };
    };
    selector?: Record<string, string> | { matchLabels?: Record<string, string> };
    ports?: Array<{ name?: string; port: number; targetPort?: number | string }>;
  };
}

/** `kubectl kustomize <dir>` (kustomize is built into kubectl). */
export function renderKustomization(dir: string): string {
  return execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8', maxBuffer: 32 * 1024 * 1024 });
}

export function readKubernetes(input: {
  origin: string;
  rendered: string;
  secrets: Map<string, Set<string>>;
}): Deployment {
  const { origin, secrets } = input;
  const problems: string[] = [];
  const objects = parseAllDocuments(input.rendered)
    .map((doc) => doc.toJS() as K8sObject | null)
    .filter((object): object is K8sObject => object !== null && typeof object === 'object');
  const configMaps = new Map<string, Record<string, string>>();
  for (const object of objects) {
    if (object.kind === 'ConfigMap') configMaps.set(object.metadata?.name ?? '', object.data ?? {});
    if (object.kind === 'Secret')
      problems.push(
        `${origin}: Secret ${object.metadata?.name} is part of the manifests; secrets are created by the operator, never applied from files`,
      );
  }

  const secretValue = (where: string, secret: string, key: string, optional: boolean): string | undefined => {
    const keys = secrets.get(secret);
    if (!keys?.has(key)) {
      if (!optional)
        problems.push(`${where}: Secret ${secret} key ${key} is not created by the secret instructions`);
      return undefined;
    }
    const dummy = dummySecret(key);
    if (dummy === undefined) problems.push(`${where}: no known shape for secret key ${key}`);
    return dummy;
  };

  const workloads: Workload[] = [];
  const pods: Array<{ workload: string; labels: Record<string, string>; containers: Container[] }> = [];
  for (const object of objects) {
    const template = object.spec?.template ?? object.spec?.jobTemplate?.spec?.template;
    if (!template?.spec) continue;
    const objectName = `${object.kind}/${object.metadata?.name}`;
    const containers = template.spec.containers ?? [];
    pods.push({ workload: objectName, labels: template.metadata?.labels ?? {}, containers });
    for (const container of [...(template.spec.initContainers ?? []), ...containers]) {
      const app = appOfImage(container.image);
      if (!app) continue;
      const where = `${origin} ${objectName} container ${container.name}`;
      const env: Record<string, string> = {};
      const placeholders = new Set<string>();
      for (const source of container.envFrom ?? []) {
        const prefix = source.prefix ?? '';
        if (source.configMapRef) {
          const data = configMaps.get(source.configMapRef.name);
          if (!data) {
            if (!source.configMapRef.optional)
              problems.push(`${where}: ConfigMap ${source.configMapRef.name} is not in the manifests`);
            continue;
          }
          for (const [key, value] of Object.entries(data)) {
            env[prefix + key] = String(value);
            placeholders.delete(prefix + key);
          }
        }
        if (source.secretRef) {
          const keys = secrets.get(source.secretRef.name);
          if (!keys) {
            if (!source.secretRef.optional)
              problems.push(
                `${where}: Secret ${source.secretRef.name} is not created by the secret instructions`,
              );
            continue;
          }
          for (const key of keys) {
            const dummy = secretValue(where, source.secretRef.name, key, false);
            if (dummy === undefined) continue;
            env[prefix + key] = dummy;
            placeholders.add(prefix + key);
          }
        }
      }
      for (const entry of container.env ?? []) {
        const ref = entry.valueFrom;
        if (ref?.secretKeyRef) {
          const dummy = secretValue(
            where,
            ref.secretKeyRef.name,
            ref.secretKeyRef.key,
            ref.secretKeyRef.optional ?? false,
          );
          if (dummy !== undefined) {
            env[entry.name] = dummy;
            placeholders.add(entry.name);
          }
        } else if (ref?.configMapKeyRef) {
          const value = configMaps.get(ref.configMapKeyRef.name)?.[ref.configMapKeyRef.key];
          if (value === undefined && !ref.configMapKeyRef.optional)
            problems.push(
              `${where}: ConfigMap ${ref.configMapKeyRef.name} has no key ${ref.configMapKeyRef.key}`,
            );
          if (value !== undefined) env[entry.name] = String(value);
          placeholders.delete(entry.name);
        } else {
          env[entry.name] = entry.value ?? '';
          placeholders.delete(entry.name);
        }
      }
      const ports: Workload['ports'] = (container.ports ?? []).map((port) => ({
        port: port.containerPort,
        what: `containerPort ${port.name ?? port.containerPort}`,
      }));
      for (const kind of ['readinessProbe', 'livenessProbe', 'startupProbe'] as const) {
        const probe = container[kind];
        const port = probe?.httpGet?.port ?? probe?.tcpSocket?.port;
        if (port === undefined) continue;
        const resolved =
          typeof port === 'number' ? port : container.ports?.find((p) => p.name === port)?.containerPort;
        if (resolved === undefined)
          problems.push(`${where}: ${kind} names port ${port}, which the container does not declare`);
        else ports.push({ port: resolved, what: kind });
      }
      const command = [...(container.command ?? []), ...(container.args ?? [])];
      workloads.push({ origin, name: objectName, app, entry: entryOf(command), env, placeholders, ports });
    }
  }

  const endpoints: Endpoint[] = [];
  for (const object of objects) {
    if (object.kind !== 'Service') continue;
    const name = object.metadata?.name ?? '';
    const namespace = object.metadata?.namespace ?? 'default';
    const selector = (object.spec?.selector ?? {}) as Record<string, string>;
    const pod = pods.find((candidate) =>
      Object.entries(selector).every(([key, value]) => candidate.labels[key] === value),
    );
    if (!pod) {
      problems.push(`${origin}: Service ${name} selects no pod template in the manifests`);
      continue;
    }
    for (const port of object.spec?.ports ?? []) {
      const target = port.targetPort ?? port.port;
      const container = pod.containers.find((c) =>
        typeof target === 'number' ? true : (c.ports ?? []).some((p) => p.name === target),
      );
      const targetPort =
        typeof target === 'number' ? target : container?.ports?.find((p) => p.name === target)?.containerPort;
      if (targetPort === undefined || !container) {
        problems.push(
          `${origin}: Service ${name} port ${port.port} targets ${target}, which no container declares`,
        );
        continue;
      }
      for (const host of [
        name,
        `${name}.${namespace}`,
        `${name}.${namespace}.svc`,
        `${name}.${namespace}.svc.cluster.local`,
      ])
        endpoints.push({ host, port: port.port, workload: pod.workload, targetPort });
    }
  }
  return { origin, workloads, endpoints, problems };
}
