import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findOrInstallTemporalCli, freePort, startDevServer } from '../../client/temporalServer';
import { bundleWorkflowCode } from '@temporalio/worker';
import { provisionPostgres } from './postgresServer';

/**
 * One real Temporal dev server (in memory, its own port) and one workflow bundle for the whole test run.
 * The address and bundle path reach the test workers through the environment.
 */
export default async function globalSetup(): Promise<void> {
  const repo = path.resolve(__dirname, '..', '..');
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'judgeflow-test-'));
  const cli = await findOrInstallTemporalCli({ home: path.join(repo, '.judgeflow'), log: (m) => console.log(m) });
  await provisionPostgres((m) => console.log(m)); // each PostgreSQL test file starts its own server from these binaries
  const port = await freePort();
  const server = await startDevServer({
    cli,
    port,
    uiPort: await freePort(),
    headless: true,
    logFile: path.join(scratch, 'temporal.log'),
  });
  const bundle = path.join(scratch, 'workflows.js');
  const quiet = { info() {}, warn() {}, error: console.error, debug() {}, trace() {}, log() {} } as never;
  fs.writeFileSync(
    bundle,
    (await bundleWorkflowCode({ workflowsPath: require.resolve('../../workflows'), logger: quiet })).code,
  );
  process.env.TEMPORAL_ADDRESS = server.address;
  process.env.TEMPORAL_CLI = cli;
  process.env.JUDGEFLOW_WORKFLOW_BUNDLE = bundle;
  process.env.JUDGEFLOW_TEST_SCRATCH = scratch;
  // Every temporary folder of the run (tempDir(), the workers, simulators, databases and browsers the tests start)
  // under the scratch folder, which globalTeardown removes: a run used to leave about 480 entries in the system's.
  // Open to other users as the system's is (PostgreSQL's initdb and server run as their own user, not root), sticky.
  const tmp = path.join(scratch, 'tmp');
  fs.mkdirSync(tmp);
  fs.chmodSync(scratch, 0o755);
  fs.chmodSync(tmp, 0o1777);
  process.env.JUDGEFLOW_TEST_SYSTEM_TMPDIR = os.tmpdir(); // for what should outlive the run (a slow-test log)
  process.env.TMPDIR = tmp;
  (globalThis as Record<string, unknown>).__judgeflowTemporal = server;
}
