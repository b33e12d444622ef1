import { assertCabDataset, CAB_DATASET_SHAPE, CAB_DATASET_SOURCE } from '../../rubrics/cab/dataset';
import { InputError } from '../../core/inputError';
import type { Command } from '../args';

const usage = 'judgeflow dataset check FILE [--json]   (a copy of the CryptoAnalystBench dataset.csv)';

export const datasetCommand: Command = {
  name: 'dataset',
  summary: 'check that a copy of the CryptoAnalystBench dataset has the published shape (columns, rows, categories)',
  usage,
  options: { json: { type: 'boolean' } },
  async run({ values, positionals }) {
    const [action, file, ...extra] = positionals;
    if (action !== 'check') throw new InputError(`unknown action "${action ?? ''}"; expected check\nUsage: ${usage}`);
    if (!file || extra.length) throw new InputError(`dataset check takes exactly one FILE\nUsage: ${usage}`);
    const check = assertCabDataset(file);
    if (values.json) console.log(JSON.stringify(check));
    else
      console.log(
        `${file}: the CryptoAnalystBench dataset (${CAB_DATASET_SOURCE.repository}, ${CAB_DATASET_SOURCE.file}): ` +
          `columns ${check.columns.join(',')}, ${check.rows} queries, ${Object.keys(CAB_DATASET_SHAPE.categories).length} categories as published.`,
      );
    return 0;
  },
};
