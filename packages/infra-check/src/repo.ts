/** The deployment files of this repository, read as an operator would use them. */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { readCompose } from './compose';
import { readKubernetes, renderKustomization } from './kubernetes';
import type { Deployment } from './model';
import { secretsFromInstructions } from './secrets';

export const REPO_ROOT = path.resolve(__dirname, '../../..');
export const INFRA = path.join(REPO_ROOT, 'infra');

export interface InfraFiles {
  composeText: string;
  envExampleText: string;
  /** The document telling the operator which Secrets to create (`kubectl create secret generic …`). */
  secretInstructions: string;
  /** Rendered `kubectl kustomize` output per kustomization directory (relative to the repository). */
  rendered: Map<string, string>;
}

/** Every directory under infra/k8s with a kustomization.yaml: the base, each overlay, the Job folders. */
export function kustomizationDirs(root = path.join(INFRA, 'k8s')): string[] {
  const dirs: string[] = [];
  const walk = (dir: string) => {
    if (existsSync(path.join(dir, 'kustomization.yaml'))) dirs.push(dir);
    for (const entry of readdirSync(dir, { withFileTypes: true }))
      if (entry.isDirectory()) walk(path.join(dir, entry.name));
  };
  walk(root);
  return dirs.sort();
}

export function readInfraFiles(): InfraFiles {
  const rendered = new Map<string, string>();
  for (const dir of kustomizationDirs())
    rendered.set(path.relative(REPO_ROOT, dir), renderKustomization(dir));
  return {
    composeText: readFileSync(path.join(INFRA, 'docker-compose.yml'), 'utf8'),
    envExampleText: readFileSync(path.join(INFRA, '.env.example'), 'utf8'),
    secretInstructions: readFileSync(path.join(INFRA, 'k8s', 'README.md'), 'utf8'),
    rendered,
  };
}

export function deploymentsOf(files: InfraFiles): Deployment[] {
  const secrets = secretsFromInstructions(files.secretInstructions);
  return [
    readCompose({ composeText: files.composeText, envExampleText: files.envExampleText }),
    ...[...files.rendered].map(([dir, rendered]) =>
      readKubernetes({ origin: `kustomize ${dir}`, rendered, secrets }),
    ),
  ];
}
