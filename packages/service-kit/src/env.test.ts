import { z } from 'zod';
import { ConfigError, envFields, loadConfig } from './env';

const schema = z.object({
  PORT: envFields.port(4000),
  DATABASE_URL: envFields.postgresUrl(),
  REDIS_URL: envFields.redisUrl().default('redis://127.0.0.1:6379'),
  DEV: envFields.boolean(false),
});

describe('configuration', () => {
  test('when values are valid, then they are parsed with defaults', () => {
    const config = loadConfig('app', schema, { DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/x' });
    expect(config).toEqual({
      PORT: 4000,
      DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/x',
      REDIS_URL: 'redis://127.0.0.1:6379',
      DEV: false,
    });
  });

  test('when values are bad, then one line names every bad variable', () => {
    let error: unknown;
    try {
      loadConfig('hub-api', schema, { PORT: 'eighty', DATABASE_URL: 'mysql://x' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toMatch(/^hub-api: invalid configuration: /);
    expect(message).toContain('PORT');
    expect(message).toContain('DATABASE_URL');
    expect(message).not.toContain('\n');
  });
});
