import { stabilityOfStoredRuns } from '../../services/storedComparison';
import { InputError } from '../../core/model/inputError';
import type { Stability } from '../../core/stats/stability';
import type { Command } from '../args';
import { requireExistingStore } from '../existingStore';
import { runIdsFrom } from './trend';

const USAGE = 'judgeflow stability --schedule NAME | --runs RUN,RUN,... [--threshold 0.8] [--json]';
const fixed = (x: number | null, digits = 2) => (x === null ? '–' : x.toFixed(digits));

export function renderStability(s: Stability): string {
  const lines = [
    `${s.runs.length} runs (${s.runs[0]?.startedAt ?? '–'} … ${s.runs.at(-1)?.startedAt ?? '–'}); an answer "changed" when less than ${s.threshold} similar to the one before`,
  ];
  for (const [c, x] of Object.entries(s.copilots)) {
    lines.push(
      `${c}: ${x.reading}. Answers: similarity ${fixed(x.meanSimilarity)} over ${x.compared} pairs, ${x.changedShare === null ? '–' : `${(x.changedShare * 100).toFixed(0)}%`} changed. Score variance across runs ${fixed(x.scoreVarianceAcrossRuns)} vs the judge's within-response ${fixed(x.judgeVarianceWithinResponse)} (${fixed(x.samples)} samples per response; F ${x.fTest ? `${fixed(x.fTest.f)} on ${x.fTest.df1} and ${x.fTest.df2} df, p ${x.fTest.p.toFixed(4)}; drift when p < ${x.alpha}` : '–'})`,
    );
  }
  return lines.join('\n');
}

export const stabilityCommand: Command = {
  name: 'stability',
  summary:
    "how much each copilot's answers to the same queries changed between runs, and whether its scores moved more than the judge's own noise",
  usage: USAGE,
  options: {
    schedule: { type: 'string' },
    runs: { type: 'string' },
    threshold: { type: 'string' },
    json: { type: 'boolean' },
  },
  async run({ values, positionals }) {
    if (positionals.length) throw new InputError(`unexpected argument "${positionals[0]}"\nUsage: ${USAGE}`);
    const threshold = values.threshold === undefined ? 0.8 : Number(values.threshold);
    if (!Number.isFinite(threshold) || threshold <= 0 || threshold > 1)
      throw new InputError(`--threshold must be a similarity between 0 and 1 (got "${values.threshold}")`);
    const store = await requireExistingStore();
    const runIds = await runIdsFrom(store, values, USAGE);
    const s = await stabilityOfStoredRuns(store, runIds, { threshold });
    console.log(values.json ? JSON.stringify(s, null, 2) : renderStability(s));
    return 0;
  },
};
