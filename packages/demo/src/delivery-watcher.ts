import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook, WebhookVerificationError, Workflow } from '@svc/sdk';
import type { DeliveryEventType } from '@svc/sdk';
import type { StackFile } from './stack-file';

/** Every event the Workflow API delivers. */
export const ALL_EVENTS: DeliveryEventType[] = [
  'invocation.completed',
  'invocation.waiting_for_artifact',
  'invocation.failed',
  'invocation.cancelled',
  'invocation.artifact_rejected',
];

/** The largest body the watcher reads; deliveries are far smaller. */
const MAX_BODY_BYTES = 1024 * 1024;

export interface DeliveryLine {
  at: Date;
  deliveryId: string;
  type: string;
  invocationId: string | null;
  state: string | null;
  repeat: boolean;
}

/** One line per verified delivery: time, type, invocation and state; a repeat of a delivery id says so. */
export function formatDelivery(line: DeliveryLine): string {
  const time = line.at.toISOString().slice(11, 19);
  return `${time}  ${line.type.padEnd(32)} ${line.invocationId ?? '-'}  state=${line.state ?? '-'}  (${line.deliveryId}${line.repeat ? ', again' : ''})`;
}

/**
 * Checks one received request the way a partner's receiver must, with the SDK's `Webhook` holding the
 * subscription's secret: the signature over the exact body, the timestamp within the tolerance, and the
 * delivery id against the ones this process already saw. Answers 204 for a good delivery (a repeat too: it was
 * handled) and 400 for one that does not verify.
 */
export async function handleDelivery(
  webhook: Webhook,
  headers: IncomingMessage['headers'],
  body: Buffer,
  now = new Date(),
): Promise<{ status: number; line: string }> {
  try {
    const delivery = await webhook.verify(body, headers);
    // Read loosely: the line shows whatever a verified body carries.
    const event = delivery.event as { type?: string; data?: { invocation_id?: string; state?: string } };
    return {
      status: 204,
      line: formatDelivery({
        at: now,
        deliveryId: delivery.id,
        type: event.type ?? 'unknown',
        invocationId: event.data?.invocation_id ?? null,
        state: event.data?.state ?? null,
        repeat: delivery.duplicate,
      }),
    };
  } catch (error) {
    const code = error instanceof WebhookVerificationError ? error.code : 'invalid';
    return {
      status: 400,
      line: `refused a request that does not verify (${code}): ${(error as Error).message}`,
    };
  }
}

export interface DeliveryWatcher {
  url: string;
  subscriptionId: string;
  /** Deletes the subscription and closes the receiver. */
  stop(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        resolve(null);
        req.destroy();
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/**
 * A local receiver for the development stack's signed deliveries: listens on 127.0.0.1, subscribes itself to
 * every event of the development project (the stack allows loopback receivers), and calls `print` with one
 * line per verified delivery. Only for local development: a real receiver is an HTTPS endpoint on a server,
 * and the signing secret never leaves it.
 */
export async function watchDeliveries(options: {
  stack: StackFile;
  port: number;
  print: (line: string) => void;
}): Promise<DeliveryWatcher> {
  const wf = new Workflow({
    baseUrl: options.stack.workflow_url,
    apiKey: options.stack.api_keys.workflow_all,
    projectId: options.stack.project.id,
  });
  // Set once the subscription (and so its secret) exists; a request before then is refused.
  let webhook: Webhook | undefined = undefined;
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void readBody(req).then(
      async (body) => {
        if (body === null || req.method !== 'POST' || !webhook) {
          res.writeHead(body === null ? 413 : 405).end();
          return;
        }
        const answer = await handleDelivery(webhook, req.headers, body);
        options.print(answer.line);
        res.writeHead(answer.status).end();
      },
      () => res.writeHead(400).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => resolve());
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/deliveries`;
  let subscription;
  try {
    subscription = await wf.subscriptions.create({
      url,
      events: ALL_EVENTS,
      description: 'local delivery watcher (pnpm deliveries:watch)',
    });
  } catch (error) {
    await new Promise((resolve) => server.close(resolve));
    throw error;
  }
  webhook = new Webhook(subscription.signing_secret);
  const subscriptionId = subscription.subscription_id;
  return {
    url,
    subscriptionId,
    async stop() {
      await wf.subscriptions.delete(subscriptionId).catch(() => undefined);
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
