import { Counter, createMetricsRegistry } from '@svc/service-kit';

/**
 * The relay's metrics: one registry for the process (process metrics included, every series labelled
 * `service="relay"`), served at `GET /metrics` by the relay's app, and the spawn counter.
 */
export const relayRegistry = createMetricsRegistry('relay');

/**
 * `svc_relay_spawns_total{outcome}`: spawn requests by outcome — `started` (the allow-listed `svc start` was
 * started), `refused` (bad token or argv not allowed) or `failed` (the process could not be started). The three
 * series exist from the start at 0, so a rate over them is defined before the first spawn.
 */
export const relaySpawns = new Counter({
  name: 'svc_relay_spawns_total',
  help: 'Spawn requests by outcome: started, refused (token or argv not allowed), failed (could not start).',
  labelNames: ['outcome'] as const,
  registers: [relayRegistry],
});
for (const outcome of ['started', 'refused', 'failed']) relaySpawns.inc({ outcome }, 0);
