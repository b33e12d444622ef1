import path from 'node:path';
import { InputError } from '../../core/model/inputError';
import type { Command } from '../args';
import { compareStoredRuns, defaultCompareDir, writeComparison } from '../compareRuns';
import { openExistingStore, storeLocation } from '../../stores';

export const compareCommand: Command = {
  name: 'compare',
  summary:
    'compare two runs (e.g. a re-judge and its source): score deltas, rank changes, most-moved queries, significance',
  usage: 'judgeflow compare RUN_A RUN_B [--out DIR] [--top N] [--json]',
  options: { out: { type: 'string' }, top: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values, positionals }) {
    if (positionals.length !== 2)
      throw new InputError(`expected RUN_A and RUN_B (got ${positionals.length} run ids)\nUsage: ${this.usage}`);
    const [runIdA, runIdB] = positionals;
    const top = values.top === undefined ? 10 : Number(values.top);
    if (!Number.isInteger(top) || top < 0)
      throw new InputError(`--top must be a whole number ≥ 0 (got "${values.top}")`);
    const store = await openExistingStore();
    if (!store)
      throw new InputError(
        `there is no results store at ${storeLocation()} yet; set JUDGEFLOW_HOME to where your runs are`,
      );
    const { comparison, runB } = await compareStoredRuns(store, runIdA, runIdB, { top });
    const dir = typeof values.out === 'string' ? path.resolve(values.out) : defaultCompareDir(runB, runIdA);
    const files = writeComparison(dir, comparison);
    if (values.json) {
      console.log(
        JSON.stringify({
          ...files,
          copilots: Object.fromEntries(
            Object.entries(comparison.copilots).map(([c, x]) => [
              c,
              {
                delta: x.overall.delta,
                pValue: x.overall.pValue,
                significant: x.overall.significant,
                rankA: x.rankA,
                rankB: x.rankB,
              },
            ]),
          ),
        }),
      );
      return 0;
    }
    for (const [copilot, x] of Object.entries(comparison.copilots)) {
      const d = x.overall;
      console.log(
        `${copilot}: ${d.delta === null ? 'no paired queries' : `Δ ${d.delta >= 0 ? '+' : ''}${d.delta.toFixed(2)} over ${d.n} queries, p ${d.pValue!.toFixed(3)}${d.significant ? ' (significant)' : ''}`}; rank ${x.rankA ?? '–'} → ${x.rankB ?? '–'}`,
      );
    }
    console.log(`Compare: ${files.markdown}\n         ${files.json}\n         ${files.html}`);
    return 0;
  },
};
