import pino from 'pino';
import type { DestinationStream, Logger, LevelWithSilent } from 'pino';
import { redactValue, scrubSecrets } from './secrets';

export type { Logger } from 'pino';

export interface LoggerOptions {
  name: string;
  level?: LevelWithSilent;
  /** Where lines go (defaults to stdout). Tests pass a stream to read what was written. */
  destination?: DestinationStream;
}

/**
 * A pino logger whose every line passes through secret redaction: secret field names anywhere in the
 * logged object become `[REDACTED]`, and secret shapes (API keys, JWTs, relay tokens, signing secrets,
 * provider credentials, URL passwords) are masked inside messages, error messages and stacks.
 */
export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      name: options.name,
      level: options.level ?? 'info',
      base: { service: options.name, pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      messageKey: 'msg',
      serializers: {
        err: (error: unknown) => {
          const serialized = pino.stdSerializers.err(error as Error) as unknown as Record<string, unknown>;
          return redactValue(serialized) as Record<string, unknown>;
        },
      },
      formatters: {
        level: (label) => ({ level: label }),
        log: (object) => redactValue(object) as Record<string, unknown>,
      },
      hooks: {
        logMethod(args, method) {
          const cleaned = args.map((arg) => (typeof arg === 'string' ? scrubSecrets(arg) : arg));
          return method.apply(this, cleaned as Parameters<typeof method>);
        },
      },
    },
    options.destination,
  );
}
