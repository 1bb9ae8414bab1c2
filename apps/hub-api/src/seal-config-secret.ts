import { createSecretBox, loadConfig, parseSecretBoxKeys, runMain } from '@svc/service-kit';
import { z } from 'zod';
import { CLOUDFLARE_TOKEN_AAD } from './data/tunnel-providers/cloudflare';

/**
 * `node dist/seal-config-secret.js < token`: seals the Cloudflare API token read from stdin with
 * HUB_ENCRYPTION_KEYS and prints the value for HUB_CLOUDFLARE_API_TOKEN_SEALED. Nothing is logged.
 */
runMain('hub-api seal-config-secret', async () => {
  const config = loadConfig(
    'hub-api seal-config-secret',
    z.object({ HUB_ENCRYPTION_KEYS: z.string().min(1) }),
  );
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const secret = Buffer.concat(chunks).toString('utf8').trim();
  if (!secret) throw new Error('hub-api seal-config-secret: send the secret on stdin');
  const box = createSecretBox(parseSecretBoxKeys(config.HUB_ENCRYPTION_KEYS));
  process.stdout.write(`${box.seal(secret, CLOUDFLARE_TOKEN_AAD)}\n`);
});
