import path from 'node:path';
import { renderReport } from '../../services/runReport';
import { assertWritableDir } from '../../core/io/writableDir';
import { InputError } from '../../core/model/inputError';
import type { Command } from '../args';
import { requireExistingStore, whereRunsLive } from '../existingStore';

export const reportCommand: Command = {
  name: 'report',
  summary: "re-render a run's report files from the results store",
  usage: "judgeflow report RUN_ID [--out DIR]   (default: the run's own <output>/<RUN_ID>/)",
  options: { out: { type: 'string', short: 'o' } },
  async run({ values, positionals }) {
    const runId = positionals[0];
    if (!runId) throw new InputError(`missing RUN_ID\nUsage: ${this.usage}`);
    const store = await requireExistingStore();
    if (!(await store.getRun(runId)))
      throw new InputError(`run ${runId} is not in this results store: ${whereRunsLive(store.location)}`);
    const out = typeof values.out === 'string' ? path.resolve(values.out) : undefined;
    if (out) assertWritableDir(out, '--out');
    const { reportPath } = await renderReport({ store, env: process.env }, runId, out);
    console.log(`Report: ${reportPath}`);
    return 0;
  },
};
