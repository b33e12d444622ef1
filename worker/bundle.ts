import fs from 'node:fs';
import { bundleWorkflowCode } from '@temporalio/worker';

/** Bundle the workflow code once into a file that workers can load (used by tests and `judgeflow bundle`). */
export async function writeWorkflowBundle(file: string): Promise<string> {
  const { code } = await bundleWorkflowCode({ workflowsPath: require.resolve('../workflows'), logger: { info() {}, warn() {}, error: console.error, debug() {}, trace() {}, log() {} } as never });
  fs.writeFileSync(file, code);
  return file;
}
