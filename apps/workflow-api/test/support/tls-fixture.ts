import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface TestCertificate {
  /** PEM private key and self-signed certificate (the certificate is its own CA). */
  key: string;
  cert: string;
  /** Path of the certificate file, e.g. for WORKFLOW_DELIVERY_CA_FILE. */
  certFile: string;
  remove(): void;
}

/** A one-day self-signed certificate for 127.0.0.1 and localhost (plus `extraNames`), made with openssl. */
export function makeTestCertificate(extraNames: string[] = []): TestCertificate {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-tls-'));
  const keyFile = path.join(dir, 'key.pem');
  const certFile = path.join(dir, 'cert.pem');
  const names = ['IP:127.0.0.1', 'DNS:localhost', ...extraNames.map((n) => `DNS:${n}`)].join(',');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile].concat([
      '-subj',
      '/CN=localhost',
      '-addext',
      `subjectAltName=${names}`,
      '-days',
      '1',
    ]),
    { stdio: 'pipe' },
  );
  return {
    key: readFileSync(keyFile, 'utf8'),
    cert: readFileSync(certFile, 'utf8'),
    certFile,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
