import path from 'node:path';
import { writeTextAtomic } from '../../core/io/files';
import type { Command } from '../args';
import type { SnapshotRecord } from '../../core/model/store';
import { openExistingStore, openStore, storeLocation } from '../../stores';
import { requireExistingStore } from '../existingStore';
import { diffSnapshots, exportCsv, exportJsonl, labelCounts, resolveSnapshotId } from '../../core/snapshots/snapshots';
import { loadTraffic } from '../../core/snapshots/traffic';
import { InputError } from '../../core/model/inputError';
import { snapshotCurate, snapshotGenerate } from '../../workflows';
import { stageProgressQuery } from '../../contract/stageProgress';
import type { StageProgress } from '../../contract/stageProgress';
import { progressMode, progressView } from '../progress';
import { watch } from '../startRun';
import type { CurateResult, GenerateResult, CurationStageCounts } from '../../contract/snapshot';
import { runWorkflow } from '../runWorkflow';
import { queryReadingOf } from '../snapshotProtocol';
import {
  CURATE_USAGE,
  curateInput,
  curateOptions,
  GENERATE_USAGE,
  generateInput,
  generateOptions,
  llmOptions,
  newJobId,
} from '../snapshotOptions';

const USAGE = [
  'judgeflow snapshot list [--json]',
  '       judgeflow snapshot show ID [--queries] [--json]',
  '       judgeflow snapshot diff A B [--all] [--json]',
  '       judgeflow snapshot export ID --format jsonl|csv [--out FILE]',
  `       judgeflow snapshot generate ${GENERATE_USAGE} [--detach] [--json]`,
  `       judgeflow snapshot curate ${CURATE_USAGE} [--detach] [--json]`,
  '  (ID may be a unique prefix of a snapshot id)',
].join('\n');

const short = (id: string | null) => id ?? '-';

function countsLine(counts: Record<string, Record<string, number>>): string {
  return Object.entries(counts)
    .map(
      ([label, values]) =>
        `${label}: ${Object.entries(values)
          .map(([k, n]) => `${k} ${n}`)
          .join(', ')}`,
    )
    .join('\n  ');
}

function describe(s: SnapshotRecord, counts: Record<string, Record<string, number>>): string {
  const m = s.meta as Record<string, unknown>;
  const lines = [
    `${s.snapshotId}  (${s.queryCount} queries, created ${s.createdAt})`,
    `  parent: ${short(s.parentId)}`,
    `  generator: ${m.generator ?? '?'}${m.protocol ? ` (${m.protocol})` : ''}${m.model ? `, model ${m.model} at ${m.baseURL}` : ''}${m.promptsVersion ? `, prompts ${m.promptsVersion}` : ''}`,
  ];
  if (m.source) lines.push(`  source: ${m.source}${m.sourceHash ? ` (sha256 ${m.sourceHash})` : ''}`);
  if (m.schedule) lines.push(`  schedule: ${m.schedule} (workflow ${m.workflowId})`);
  if (m.params) lines.push(`  params: ${JSON.stringify(m.params)}`);
  if (Array.isArray(m.stages))
    lines.push('  stages:', ...(m.stages as CurationStageCounts[]).map((st) => `    ${stageLine(st)}`));
  if (Array.isArray(m.shortCells) && m.shortCells.length)
    lines.push(`  SHORT cells (fewer queries than asked): ${(m.shortCells as string[]).join(', ')}`);
  lines.push(`  counts:\n    ${countsLine(counts).replace(/\n  /g, '\n    ')}`);
  return lines.join('\n');
}

export function stageLine(st: CurationStageCounts): string {
  const details = Object.entries(st)
    .filter(([k, v]) => !['stage', 'in', 'out'].includes(k) && typeof v !== 'object')
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  return `${st.stage.padEnd(10)} ${String(st.in).padStart(5)} → ${String(st.out).padEnd(5)}${details ? ` (${details})` : ''}`;
}

/** Bars (or lines) from the job's progress query while it runs. */
function stageWatcher(values: Record<string, unknown>, print: (line: string) => void) {
  const mode = progressMode(values.progress, Boolean(values.json));
  return <R>(handle: { query: (q: typeof stageProgressQuery) => Promise<StageProgress>; result: () => Promise<R> }) =>
    watch(handle, progressView(mode, print), undefined, stageProgressQuery);
}

async function generate(values: Record<string, unknown>): Promise<number> {
  const input = generateInput(values as never);
  const asJson = Boolean(values.json);
  const print = (line: string) => (asJson ? console.error(line) : console.log(line));
  const wait = stageWatcher(values, print);
  const result = (await runWorkflow({
    workflow: snapshotGenerate,
    workflowId: newJobId('generate'),
    input,
    detach: Boolean(values.detach),
    print,
    wait,
  })) as GenerateResult | undefined;
  if (!result) return 0;
  if (asJson) console.log(JSON.stringify(result));
  else {
    console.log(
      `Snapshot ${result.snapshotId}: ${result.queries} queries in ${result.cells} cells after ${result.rounds} round(s); ${result.candidates} candidates, ${result.duplicatesRemoved} near-duplicates removed (prompts ${result.promptsVersion}).`,
    );
    if (result.shortCells.length)
      console.log(
        `WARNING: ${result.shortCells.length} cell(s) are short of ${input.perCell} queries: ${result.shortCells.join(', ')} (raise --max-rounds or --over-ask)`,
      );
  }
  return result.shortCells.length ? 1 : 0;
}

async function curate(values: Record<string, unknown>): Promise<number> {
  const from = typeof values.from === 'string' ? values.from : '';
  if (!from) throw new InputError(`missing --from FILE\nUsage: judgeflow snapshot curate ${CURATE_USAGE}`);
  const input = curateInput(values as never, from);
  // Check the file here too, so bad lines are reported before anything starts (the activity checks again).
  const traffic = loadTraffic(input.from, input.skipBad);
  if (input.pruneRunId) {
    const store = await openStore();
    if (!(await store.getRun(input.pruneRunId)))
      throw new InputError(
        `--prune-run ${input.pruneRunId}: no such run in the results store ${store.location} (see judgeflow runs)`,
      );
  }
  const asJson = Boolean(values.json);
  const print = (line: string) => (asJson ? console.error(line) : console.log(line));
  if (traffic.bad.length)
    print(
      `Skipping ${traffic.bad.length} malformed line(s): ${traffic.bad
        .slice(0, 10)
        .map((b) => b.line)
        .join(', ')}${traffic.bad.length > 10 ? ', ...' : ''}`,
    );
  const wait = stageWatcher(values, print);
  const result = (await runWorkflow({
    workflow: snapshotCurate,
    workflowId: newJobId('curate'),
    input,
    detach: Boolean(values.detach),
    print,
    wait,
  })) as CurateResult | undefined;
  if (!result) return 0;
  if (asJson) console.log(JSON.stringify(result));
  else {
    console.log(`Snapshot ${result.snapshotId}: ${result.queries} queries curated from ${input.from}`);
    for (const st of result.stages) console.log(`  ${stageLine(st)}`);
    console.log(`  ${'category'.padEnd(36)} traffic  share  chosen`);
    const total = Object.values(result.proportions).reduce((a, b) => a + b, 0);
    for (const [c, n] of Object.entries(result.proportions))
      console.log(
        `  ${c.padEnd(36)} ${String(n).padStart(5)}  ${total ? ((100 * n) / total).toFixed(1).padStart(5) : '  -  '}%  ${String(result.allocation[c] ?? 0).padStart(5)}`,
      );
  }
  return 0;
}

function writeOut(text: string, out: string | undefined): void {
  if (!out) {
    process.stdout.write(text);
    return;
  }
  writeTextAtomic(path.resolve(out), text);
}

export const snapshotCommand: Command = {
  name: 'snapshot',
  summary:
    'list, show, diff and export query snapshots; generate (LATTICE) or curate from traffic (CryptoAnalystBench)',
  usage: USAGE,
  options: {
    json: { type: 'boolean' },
    queries: { type: 'boolean' },
    all: { type: 'boolean' },
    format: { type: 'string' },
    out: { type: 'string', short: 'o' },
    detach: { type: 'boolean' },
    progress: { type: 'string' },
    ...llmOptions,
    ...generateOptions,
    ...curateOptions,
  },
  async run({ values, positionals }) {
    const [action, ...ids] = positionals;
    const need = (n: number, what: string) => {
      if (ids.length !== n) throw new InputError(`snapshot ${action} needs ${what}\nUsage: ${USAGE}`);
    };
    switch (action) {
      case 'generate':
        return generate(values);
      case 'curate':
        return curate(values);
      case 'list': {
        const store = await openExistingStore();
        const all = store ? await store.listSnapshots() : [];
        if (values.json) console.log(JSON.stringify(all));
        else if (!all.length)
          console.log(
            `No snapshots in ${store?.location ?? storeLocation()}. Make one with judgeflow snapshot generate|curate, or run a benchmark.`,
          );
        else {
          console.log(
            `${'SNAPSHOT'.padEnd(18)} ${'CREATED'.padEnd(24)} ${'QUERIES'.padStart(7)}  ${'GENERATOR'.padEnd(16)} PARENT`,
          );
          for (const s of all)
            console.log(
              `${s.snapshotId.padEnd(18)} ${s.createdAt.padEnd(24)} ${String(s.queryCount).padStart(7)}  ${String((s.meta as Record<string, unknown>).generator ?? '?').padEnd(16)} ${short(s.parentId)}`,
            );
        }
        return 0;
      }
      case 'show': {
        need(1, 'one snapshot ID');
        const store = await requireExistingStore();
        const s = await resolveSnapshotId(store, ids[0]);
        const queries = await store.snapshotQueries(s.snapshotId);
        const { labelsOf } = queryReadingOf(s);
        const counts = labelCounts(queries, labelsOf);
        if (values.json) console.log(JSON.stringify({ ...s, counts, ...(values.queries ? { queries } : {}) }));
        else {
          console.log(describe(s, counts));
          if (values.queries)
            for (const q of queries)
              console.log(`  ${q.id}\t${Object.values(labelsOf(q)).flat().join('/')}\t${q.text}`);
        }
        return 0;
      }
      case 'diff': {
        need(2, 'two snapshot IDs (A B)');
        const store = await requireExistingStore();
        const [a, b] = await Promise.all(ids.map((id) => resolveSnapshotId(store, id)));
        const d = diffSnapshots(
          { id: a.snapshotId, queries: await store.snapshotQueries(a.snapshotId) },
          { id: b.snapshotId, queries: await store.snapshotQueries(b.snapshotId) },
          queryReadingOf(a, b).labelsOf,
        );
        if (values.json) console.log(JSON.stringify(d));
        else {
          console.log(
            `${d.a} → ${d.b}: ${d.added.length} added, ${d.removed.length} removed, ${d.unchanged} unchanged (compared by normalised text)${b.parentId === a.snapshotId ? `; ${d.b} is a child of ${d.a}` : ''}`,
          );
          for (const [label, values2] of Object.entries(d.counts)) {
            const changed = Object.entries(values2).filter(([, v]) => v.a !== v.b);
            if (changed.length) console.log(`  ${label}: ${changed.map(([k, v]) => `${k} ${v.a}→${v.b}`).join(', ')}`);
          }
          const limit = values.all ? Infinity : 20;
          for (const q of d.added.slice(0, limit)) console.log(`  + ${q.text}`);
          for (const q of d.removed.slice(0, limit)) console.log(`  - ${q.text}`);
          if (!values.all && (d.added.length > limit || d.removed.length > limit))
            console.log('  ... (--all shows every query)');
        }
        return 0;
      }
      case 'export': {
        need(1, 'one snapshot ID');
        const format = typeof values.format === 'string' ? values.format : 'jsonl';
        if (format !== 'jsonl' && format !== 'csv') throw new InputError(`--format ${format}: expected jsonl or csv`);
        const store = await requireExistingStore();
        const s = await resolveSnapshotId(store, ids[0]);
        const queries = await store.snapshotQueries(s.snapshotId);
        const { queryFields } = queryReadingOf(s);
        writeOut(
          format === 'jsonl' ? exportJsonl(queries, queryFields) : exportCsv(queries, queryFields),
          typeof values.out === 'string' ? values.out : undefined,
        );
        if (typeof values.out === 'string')
          console.error(`Wrote ${queries.length} queries of ${s.snapshotId} to ${path.resolve(values.out)}`);
        return 0;
      }
      default:
        throw new InputError(`${action ? `unknown action "${action}"` : 'missing action'}\nUsage: ${USAGE}`);
    }
  },
};
