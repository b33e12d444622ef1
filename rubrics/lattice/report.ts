import type { ReportFiles, ReportInput } from '../../core/protocol';
import { fmt, mdCode, mdText, simulatedBanner, table } from '../../core/markdown';
import { lengthBias } from '../../core/lengthBias';
import { perQueryScores, separability } from '../../core/separability';
import { INTERVAL_NOTE, intervalText, lengthBiasSection, separabilitySection } from '../../core/statsMarkdown';
import { summariseLattice } from './aggregate';
import type { LatticeRubric } from './rubric';
import { LATTICE_CATEGORIES, LATTICE_DIMENSIONS, LATTICE_TASKS } from './rubric';

export function buildLatticeReport(input: ReportInput): ReportFiles {
  const rubric = input.rubric as LatticeRubric;
  const { run, queries, responses, judgments } = input;
  const seed = input.seed;
  const copilots = summariseLattice(rubric.data, queries, run.copilots, responses, judgments, seed);
  const simulated = input.simulated;
  const names = Object.keys(copilots).sort((a, b) => (copilots[b].score ?? -1) - (copilots[a].score ?? -1));
  const inSnapshot = new Set(queries.map((q) => q.id));
  const separable = separability(perQueryScores(judgments.filter((j) => inSnapshot.has(j.queryId)), run.copilots), names, { seed });
  const lengths = lengthBias(judgments.filter((j) => inSnapshot.has(j.queryId)), responses, run.copilots, 'score (0–100)');
  const json = {
    runId: run.runId,
    protocol: 'lattice',
    rubricVersion: rubric.version,
    snapshotId: run.snapshotId,
    sourceRunId: run.sourceRunId,
    simulated,
    judge: { ...run.judge, rubricVersion: rubric.version },
    queries: queries.length,
    generatedAt: new Date().toISOString(),
    copilots,
    separability: separable,
    lengthBias: lengths,
  };

  const byKey = new Map(judgments.map((j) => [`${j.queryId}\u0000${j.copilot}`, j]));
  const dimIds = [...LATTICE_DIMENSIONS, rubric.data.refusal.id];
  const csv: unknown[][] = [['run_id', 'query_id', 'copilot', 'task', 'category', ...dimIds, 'total', 'response_status', 'judgment_status', 'failure_reason']];
  const responseOf = new Map(responses.map((r) => [`${r.queryId}\u0000${r.copilot}`, r]));
  for (const q of queries) {
    for (const copilot of run.copilots) {
      const r = responseOf.get(`${q.id}\u0000${copilot}`);
      const j = byKey.get(`${q.id}\u0000${copilot}`);
      const reason = r && r.status !== 'ok' ? `${r.status}: ${r.errorKind ?? ''} ${r.errorMessage ?? ''}`.trim() : j?.status === 'failed' ? j.error : !r ? 'not collected' : !j ? 'not judged' : '';
      csv.push([run.runId, q.id, copilot, q.task, q.category, ...dimIds.map((d) => j?.scores?.[d] ?? ''), j?.total ?? '', r?.status ?? 'none', j?.status ?? 'none', reason]);
    }
  }

  const dimName = (id: string) => [...rubric.data.dimensions, rubric.data.refusal].find((d) => d.id === id)!.name;
  const md = [
    `# LATTICE report — run ${run.runId}\n`,
    simulatedBanner(simulated),
    `Snapshot \`${run.snapshotId}\` (${queries.length} queries) · rubric version \`${rubric.version}\` · judge ${mdCode(run.judge.model)} at ${mdText(run.judge.baseURL)} (temperature ${run.judge.temperature})${run.sourceRunId ? ` · re-judged from run \`${run.sourceRunId}\`` : ''}\n`,
    '## Overall (0–100)\n',
    table(
      ['rank', 'copilot', 'score', '95% CI', 'judged', 'no score'],
      names.map((n, i) => [i + 1, n, fmt(copilots[n].score), intervalText(copilots[n].ci95), copilots[n].n, copilots[n].failed]),
    ),
    '\n"no score" counts failed judgments and failed or missing responses; they are missing data, never scored as zero. ' + INTERVAL_NOTE + '\n',
    ...separabilitySection(separable),
    '## Dimensions (0–10)\n',
    table(['copilot', ...dimIds.map((d) => (dimName(d) === d ? d : `${d} ${dimName(d)}`))], names.map((n) => [n, ...dimIds.map((d) => fmt(copilots[n].dimensions[d]))])),
    '\n## Tasks (0–100)\n',
    table(['task', ...names], LATTICE_TASKS.map((t) => [`${t} ${rubric.data.tasks.find((x) => x.id === t)!.name}`, ...names.map((n) => fmt(copilots[n].tasks[t]))])),
    '\n## Categories (0–100)\n',
    table(['category', ...names], LATTICE_CATEGORIES.map((c) => [`${c} ${rubric.data.categories.find((x) => x.id === c)!.name}`, ...names.map((n) => fmt(copilots[n].categories[c]))])),
    '',
    ...lengthBiasSection(lengths),
  ].join('\n');
  return { json, markdown: md, csv, summary: Object.fromEntries(names.map((n) => [n, copilots[n].score])) };
}
