import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { doctorChecks } from '../../client/commands/doctor';
import { connectionOptions } from '../../client/connection';
import { tempDir } from '../support/harness';

/** The environment a user has: no TEMPORAL_ADDRESS, a TOML config file with profiles, TEMPORAL_PROFILE picking one. */
function profileEnv(
  profiles: Record<string, { address: string; namespace: string }>,
  profile: string,
): NodeJS.ProcessEnv {
  const dir = tempDir('jf-doctor-');
  const file = path.join(dir, 'temporal.toml');
  fs.writeFileSync(
    file,
    Object.entries(profiles)
      .map(([name, p]) => `[profile.${name}]\naddress = "${p.address}"\nnamespace = "${p.namespace}"\n`)
      .join('\n'),
  );
  const { TEMPORAL_ADDRESS: _a, TEMPORAL_NAMESPACE: _n, ...rest } = process.env;
  return { ...rest, TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: profile, JUDGEFLOW_HOME: path.join(dir, 'home') };
}

const server = () => process.env.TEMPORAL_ADDRESS!;

async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

test('a profile of a Temporal CLI config file is honoured, and TEMPORAL_* variables override it', () => {
  const env = profileEnv(
    { default: { address: '127.0.0.1:1', namespace: 'default' }, ci: { address: server(), namespace: 'judging' } },
    'ci',
  );
  expect(connectionOptions(env)).toMatchObject({ address: server(), namespace: 'judging' });
  expect(connectionOptions({ ...env, TEMPORAL_NAMESPACE: 'other' })).toMatchObject({
    address: server(),
    namespace: 'other',
  });
  const { TEMPORAL_PROFILE: _p, ...withoutProfile } = env;
  expect(connectionOptions(withoutProfile)).toMatchObject({ address: '127.0.0.1:1' });
});

test('judgeflow doctor on a working cluster from a profile: every check passes, one line each', async () => {
  const lines = await doctorChecks(profileEnv({ ci: { address: server(), namespace: 'default' } }, 'ci'));
  expect(lines.map((l) => l.check)).toEqual([
    'connection settings',
    'cluster',
    'namespace',
    'worker deployments',
    'store',
    'chromium',
  ]);
  expect(lines.every((l) => l.ok)).toBe(true);
  expect(lines.find((l) => l.check === 'cluster')!.says).toContain(`at ${server()}`);
  expect(lines.find((l) => l.check === 'worker deployments')!.says).toMatch(/^\d+ in namespace default/);
  expect(lines.find((l) => l.check === 'store')!.says).toContain('does not exist yet');
});

test('judgeflow doctor names what is wrong: an unknown namespace, a server that does not answer, a profile the file lacks', async () => {
  const unknown = await doctorChecks(profileEnv({ ci: { address: server(), namespace: 'no-such-namespace' } }, 'ci'));
  expect(unknown.find((l) => l.check === 'namespace')).toMatchObject({ ok: false });
  expect(unknown.find((l) => l.check === 'namespace')!.says).toContain('no-such-namespace');

  const down = await doctorChecks(
    profileEnv({ ci: { address: `127.0.0.1:${await closedPort()}`, namespace: 'default' } }, 'ci'),
  );
  expect(down.find((l) => l.check === 'cluster')).toMatchObject({ ok: false });
  expect(down.find((l) => l.check === 'cluster')!.says).toContain('no Temporal server answers');

  const env = profileEnv({ ci: { address: server(), namespace: 'default' } }, 'missing');
  const [settings] = await doctorChecks(env);
  expect(settings).toMatchObject({ check: 'connection settings', ok: false });
  expect(settings.says).toContain(env.TEMPORAL_CONFIG_FILE!);
  expect(settings.says).toContain('TEMPORAL_PROFILE=missing');
});
