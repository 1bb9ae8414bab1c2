import { adminUrl, clientConfig, parseDatabaseUrl, withDatabase } from './connection';

describe('parseDatabaseUrl', () => {
  it('when given a full URL, then returns its decoded parts', () => {
    expect(
      parseDatabaseUrl('postgresql://svc:p%40ss%2Fw@db.internal:6543/svc_hub?schema=hub&sslmode=require'),
    ).toEqual({
      protocol: 'postgresql',
      host: 'db.internal',
      port: 6543,
      user: 'svc',
      password: 'p@ss/w',
      database: 'svc_hub',
      schema: 'hub',
      params: { schema: 'hub', sslmode: 'require' },
    });
  });

  it('when the URL has no port, password or database, then defaults the port and leaves the rest undefined', () => {
    expect(parseDatabaseUrl('postgres://postgres@127.0.0.1')).toMatchObject({
      protocol: 'postgres',
      port: 5432,
      password: undefined,
      database: undefined,
      schema: undefined,
    });
  });

  it('when the URL is malformed, then the error does not echo it (it may hold a password)', () => {
    expect(() => parseDatabaseUrl('postgres://user:secret@[bad/db')).toThrow(/invalid database URL/);
    expect(() => parseDatabaseUrl('postgres://user:secret@[bad/db')).not.toThrow(/secret/);
  });

  it('when the protocol is not postgres, then throws', () => {
    expect(() => parseDatabaseUrl('mysql://root@localhost/db')).toThrow(/protocol must be postgres/);
  });

  it('when the schema parameter is not a plain identifier, then throws', () => {
    expect(() => parseDatabaseUrl('postgres://u@h/db?schema=a;drop')).toThrow(/schema parameter/);
  });
});

describe('withDatabase and adminUrl', () => {
  it('when swapping the database, then credentials, host and parameters are kept', () => {
    expect(withDatabase('postgresql://svc:pw@h:5433/svc_hub?sslmode=disable', 'svc_hub_t_1')).toBe(
      'postgresql://svc:pw@h:5433/svc_hub_t_1?sslmode=disable',
    );
  });

  it('when the URL has no database path, then one is added', () => {
    expect(withDatabase('postgresql://postgres@127.0.0.1:5432', 'x')).toBe(
      'postgresql://postgres@127.0.0.1:5432/x',
    );
  });

  it('when the database name is empty, then throws', () => {
    expect(() => withDatabase('postgresql://postgres@127.0.0.1/db', '')).toThrow(/must not be empty/);
  });

  it('when asking for the admin URL, then it points at the postgres database without the Prisma schema', () => {
    expect(adminUrl('postgresql://svc:pw@h/svc_hub?schema=hub&sslmode=disable')).toBe(
      'postgresql://svc:pw@h/postgres?sslmode=disable',
    );
  });
});

describe('clientConfig', () => {
  it('when the URL has no schema, then the connection string is passed through', () => {
    expect(clientConfig('postgresql://postgres@127.0.0.1:5432/db')).toEqual({
      connectionString: 'postgresql://postgres@127.0.0.1:5432/db',
    });
  });

  it('when the URL has a schema and options, then both become server options and leave the URL', () => {
    expect(clientConfig('postgresql://postgres@127.0.0.1/db?schema=hub&options=-c%20work_mem%3D8MB')).toEqual(
      {
        connectionString: 'postgresql://postgres@127.0.0.1/db',
        options: '-c work_mem=8MB -c search_path=hub',
      },
    );
  });
});
