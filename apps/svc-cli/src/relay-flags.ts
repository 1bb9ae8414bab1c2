import { Flags } from '@oclif/core';

/** `--host` and `--port` of the `svc internal relay` commands: where the relay listens (or should). */
export const relayAddressFlags = {
  host: Flags.string({ description: 'Relay host (default: the pulled runtime config, else 127.0.0.1).' }),
  port: Flags.integer({
    description: 'Relay port (default: the pulled runtime config, else 8787).',
    min: 1,
    max: 65535,
  }),
};
