/** What every reader (compose, rendered Kubernetes manifests) turns a deployment file into. */

export type AppName =
  'hub-api' | 'workflow-api' | 'relay' | 'console-router' | 'reference-agent' | 'control-web' | 'svc-cli';

/** Which entry point of an app image a container runs. */
export type Entry = 'main' | 'worker' | 'migrate' | 'bootstrap';

export interface Workload {
  /** Where it was read from, e.g. `compose` or `kustomize infra/k8s/overlays/prod`. */
  origin: string;
  /** Compose service, or `Deployment/name` / `Job/name`. */
  name: string;
  app: AppName;
  entry: Entry;
  /** The environment the process gets; secret values are dummies of the right shape (see secrets.ts). */
  env: Record<string, string>;
  /** Variables whose value is a placeholder for a secret the operator provides (a Secret, infra/.env). */
  placeholders: Set<string>;
  /** Ports the platform reaches this process on: container ports, probe and healthcheck ports. */
  ports: Array<{ port: number; what: string }>;
}

/** A name and port other services use in URLs (compose service, Kubernetes Service). */
export interface Endpoint {
  host: string;
  port: number;
  /** The workload behind it and the container port the traffic lands on. */
  workload: string;
  targetPort: number;
}

export interface Deployment {
  origin: string;
  workloads: Workload[];
  endpoints: Endpoint[];
  /** Problems found while reading (an unknown secret key, a variable missing from infra/.env.example…). */
  problems: string[];
}
