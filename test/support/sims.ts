import { startSimServer, type SimOptions, type SimServer } from '../../sim/server';

/**
 * Sim servers shared by every test of a file: started in beforeAll, closed in afterAll (register this before the
 * file's own hooks). Most e2e files need the same judge + copilots pair; this replaces their identical hook boilerplate.
 * The returned fields are filled once beforeAll has run, so read them inside tests or hooks, not at load time.
 */
export function simServersForFile<K extends string>(options: Record<K, SimOptions>): Record<K, SimServer> {
  const servers = {} as Record<K, SimServer>;
  beforeAll(async () => {
    for (const name of Object.keys(options) as K[]) servers[name] = await startSimServer(options[name]);
  });
  afterAll(async () => {
    await Promise.all(Object.values<SimServer>(servers).map((s) => s.close()));
  });
  return servers;
}

/** A starter of sim servers for tests that each want their own options (over `defaults`); all are closed after the file. */
export function simServerPerTest(defaults: SimOptions = {}): (options?: SimOptions) => Promise<SimServer> {
  const servers: SimServer[] = [];
  afterAll(() => Promise.all(servers.map((s) => s.close())));
  return async (options = {}) => {
    const server = await startSimServer({ ...defaults, ...options });
    servers.push(server);
    return server;
  };
}
