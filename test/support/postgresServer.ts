import { postgresUnavailable, startPostgres, type PostgresServer } from '../../client/postgresServer';

export { provisionPostgres } from '../../client/postgresServer';

/**
 * One server shared by the tests of a file, started in beforeAll and removed in afterAll. `skip` is describe/test.skip
 * when no server can be provisioned here (with the reason in `unavailable`, also printed), else describe/test.
 */
export function postgresForFile(): {
  unavailable: string | null;
  server: () => PostgresServer;
  describe: jest.Describe;
  test: jest.It;
} {
  const unavailable = postgresUnavailable();
  if (unavailable) console.warn(`PostgreSQL tests skipped: ${unavailable}`);
  let server: PostgresServer | undefined;
  beforeAll(async () => {
    if (!unavailable) server = await startPostgres((line) => console.log(line));
  }, 600_000);
  afterAll(async () => {
    await server?.stop();
  });
  return {
    unavailable,
    server: () =>
      server ??
      (() => {
        throw new Error('the PostgreSQL server is started in beforeAll');
      })(),
    describe: unavailable ? describe.skip : describe,
    test: unavailable ? test.skip : test,
  };
}
