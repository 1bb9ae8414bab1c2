import { AppError, toProblem } from './errors';

describe('problem mapping', () => {
  test('when an AppError is mapped, then its status, code, detail and extras are public', () => {
    const p = toProblem(
      new AppError({ status: 409, code: 'idempotency_conflict', detail: 'changed', extra: { a: 1 } }),
      'req_1',
    );
    expect(p.status).toBe(409);
    expect(p.body).toMatchObject({
      status: 409,
      code: 'idempotency_conflict',
      detail: 'changed',
      a: 1,
      request_id: 'req_1',
    });
    expect(p.internal).toBe(false);
  });

  test('when an unknown error is mapped, then a 500 hides its message', () => {
    const p = toProblem(new Error('relation "secret_table" does not exist'), 'req_2');
    expect(p.status).toBe(500);
    expect(p.body.code).toBe('internal_error');
    expect(JSON.stringify(p.body)).not.toContain('secret_table');
    expect(p.internal).toBe(true);
  });

  test('when body-parser reports malformed JSON or a large body, then 400 and 413 problems result', () => {
    expect(toProblem({ type: 'entity.parse.failed', status: 400 }).body.code).toBe('malformed_json');
    expect(toProblem({ type: 'entity.too.large', status: 413 }).status).toBe(413);
  });

  test('when an exposed 4xx error from another layer is mapped, then its code and missing scopes pass through', () => {
    const p = toProblem({
      status: 403,
      code: 'scope_missing',
      detail: 'needs x',
      expose: true,
      missing: ['x:read'],
    });
    expect(p.body).toMatchObject({ status: 403, code: 'scope_missing', missing_scopes: ['x:read'] });
  });

  test('when a 5xx AppError is mapped, then it is flagged internal for logging', () => {
    expect(
      toProblem(new AppError({ status: 503, code: 'dependency_unavailable', detail: 'later' })).internal,
    ).toBe(true);
  });
});

describe('database outages', () => {
  test('when the database cannot be reached, then 503 database_unavailable with Retry-After, never details', () => {
    const prismaLike = Object.assign(new Error("Can't reach database server at 127.0.0.1:5432"), {
      code: 'P1001',
    });
    const pgLike = Object.assign(new Error('terminating connection due to administrator command'), {
      code: '57P01',
    });
    const wrapped = new Error('query failed', { cause: new Error('Connection terminated unexpectedly') });
    for (const error of [prismaLike, pgLike, wrapped]) {
      const p = toProblem(error, 'req_1');
      expect(p.status).toBe(503);
      expect(p.body.code).toBe('database_unavailable');
      expect(p.headers['Retry-After']).toBe('1');
      expect(JSON.stringify(p.body)).not.toContain('127.0.0.1');
    }
    expect(toProblem(new Error('boom')).status).toBe(500);
  });
});
