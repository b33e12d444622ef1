import { renderReport } from '../../activities/run';
import { openStore } from '../../core/store';
import { InputError } from '../../core/validate';
import type { Command } from '../args';
import { whereRunsLive } from '../existingStore';

export const reportCommand: Command = {
  name: 'report',
  summary: "re-render a run's report files from the results store",
  usage: 'judgeflow report RUN_ID',
  async run({ positionals }) {
    const runId = positionals[0];
    if (!runId) throw new InputError(`missing RUN_ID\nUsage: ${this.usage}`);
    const store = openStore();
    if (!store.getRun(runId)) throw new InputError(`run ${runId} is not in this results store: ${whereRunsLive(store.file)}`);
    const { reportPath } = await renderReport({ store, env: process.env }, runId);
    console.log(`Report: ${reportPath}`);
    return 0;
  },
};
