import path from 'node:path';
import { writeTextAtomic } from '../../core/io/files';
import { gateDetails, gateJunit, gateLine } from '../../core/compare/gate';
import { DEFAULT_MIN_COVERAGE, gateCoverage } from '../../core/compare/gateCandidate';
import { InputError } from '../../core/model/inputError';
import type { Command } from '../args';
import { gateStoredRuns } from '../compareRuns';
import { requireExistingStore } from '../existingStore';

const USAGE =
  'judgeflow gate --baseline RUN_A --candidate RUN_B [--max-drop POINTS] [--alpha 0.05] [--min-coverage 0.9] [--json] [--junit FILE]';

function number(
  values: Record<string, unknown>,
  flag: string,
  fallback: number,
  ok: (x: number) => boolean,
  what: string,
): number {
  const raw = values[flag];
  if (raw === undefined) return fallback;
  const x = Number(raw);
  if (typeof raw !== 'string' || raw.trim() === '' || !Number.isFinite(x) || !ok(x))
    throw new InputError(`--${flag} must be ${what} (got "${raw}")\nUsage: ${USAGE}`);
  return x;
}

export const gateCommand: Command = {
  name: 'gate',
  summary:
    'regression gate for CI: exit 1 when a copilot scored significantly lower in the candidate run than in the baseline',
  usage: USAGE,
  options: {
    baseline: { type: 'string' },
    candidate: { type: 'string' },
    'max-drop': { type: 'string' },
    alpha: { type: 'string' },
    'min-coverage': { type: 'string' },
    json: { type: 'boolean' },
    junit: { type: 'string' },
  },
  async run({ values, positionals }) {
    if (positionals.length)
      throw new InputError(
        `unexpected argument "${positionals[0]}": name the runs with --baseline and --candidate\nUsage: ${USAGE}`,
      );
    const baseline = typeof values.baseline === 'string' ? values.baseline : '';
    const candidate = typeof values.candidate === 'string' ? values.candidate : '';
    if (!baseline || !candidate)
      throw new InputError(`missing --${baseline ? 'candidate' : 'baseline'} RUN\nUsage: ${USAGE}`);
    const maxDrop = number(values, 'max-drop', 0, (x) => x >= 0, 'a number of points ≥ 0');
    const alpha = number(values, 'alpha', 0.05, (x) => x > 0 && x < 1, 'a number between 0 and 1');
    const minCoverage = number(
      values,
      'min-coverage',
      DEFAULT_MIN_COVERAGE,
      (x) => x >= 0 && x <= 1,
      'a share between 0 and 1',
    );
    const store = await requireExistingStore();
    const outcome = await gateStoredRuns(store, baseline, candidate, { maxDrop, alpha, minCoverage });
    const { comparison, result, problems } = outcome;
    const failed = result.regressions.length > 0 || problems.length > 0;
    if (typeof values.junit === 'string')
      writeTextAtomic(path.resolve(values.junit), gateJunit(comparison, { maxDrop }, problems));
    if (values.json)
      console.log(JSON.stringify({ pass: !failed, ...result, problems, coverage: gateCoverage(comparison) }, null, 2));
    else {
      if (comparison.judgeChanged)
        console.log(
          `note: the runs were judged by different judges (${comparison.runA.judge.model} → ${comparison.runB.judge.model}); a difference may be the judge's`,
        );
      if (comparison.rubricChanged)
        console.log(
          `note: the runs were judged under different rubric versions (${comparison.runA.rubricVersion} → ${comparison.runB.rubricVersion})`,
        );
      for (const d of gateDetails(comparison, { maxDrop })) {
        console.log(gateLine(d, comparison.copilots[d.copilot]));
        // Where a regressed copilot fell most: its groups (task, category, tags) by delta, lowest first.
        if (d.verdict === 'regression')
          for (const g of [...d.groups].sort((x, y) => (x.delta ?? 0) - (y.delta ?? 0)).slice(0, 5))
            console.log(`  ${g.group}: Δ ${g.delta === null ? '–' : g.delta.toFixed(2)} over ${g.n}`);
      }
      for (const p of problems) console.log(`FAIL: ${p}`);
      if (problems.length)
        console.log(
          `FAIL: the candidate cannot pass the gate (${problems.length} problem${problems.length === 1 ? '' : 's'} above)`,
        );
      else
        console.log(
          result.regressions.length
            ? `FAIL: ${result.regressions.map((r) => r.copilot).join(', ')} regressed (α ${alpha}, max drop ${maxDrop})`
            : `PASS: no copilot regressed (α ${alpha}, max drop ${maxDrop})`,
        );
    }
    return failed ? 1 : 0;
  },
};
