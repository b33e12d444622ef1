import fs from 'node:fs';
import type { StartedServer } from '../../client/temporalServer';

export default async function globalTeardown(): Promise<void> {
  const server = (globalThis as Record<string, unknown>).__judgeflowTemporal as StartedServer | undefined;
  await server?.stop();
  if (process.env.JUDGEFLOW_TEST_SCRATCH)
    fs.rmSync(process.env.JUDGEFLOW_TEST_SCRATCH, { recursive: true, force: true });
}
