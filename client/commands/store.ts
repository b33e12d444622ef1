import type { RecordKind } from '../../core/model/store';
import { InputError } from '../../core/model/inputError';
import { openNew, parseStoreSpec, storeExists, storeLocation, storeTarget, type StoreTarget } from '../../stores';
import { copyStore, type CopyCounts } from '../../stores/copy';
import type { Command } from '../args';

const usage = [
  'judgeflow store migrate [--json]                      bring the results store (JUDGEFLOW_STORE) to the current schema',
  '       judgeflow store copy --from STORE --to STORE [--json]   copy every record of one store into another',
  '  STORE: a file path or sqlite:PATH (SQLite), or postgres://USER@HOST:PORT/DATABASE (password in PGPASSWORD, ~/.pgpass or the URL)',
].join('\n');

const LABELS: Record<RecordKind, string> = {
  snapshot: 'snapshots',
  rubric: 'rubrics',
  run: 'runs',
  response: 'responses',
  judgeUnits: 'judge units',
  judgment: 'judgments',
  judgeTurn: 'judge conversation turns',
  llmCalls: 'LLM calls',
  cachedAnswer: 'cached judge answers',
  work: 'snapshot job results',
  scheduleSnapshot: 'scheduled snapshots',
  artefact: 'artefacts (screenshots)',
  groundingCheck: 'grounding checks (with their claims)',
  agentStep: 'agent steps (model turns and tool calls)',
  worldCall: 'world snapshot tool results',
  study: 'studies',
};

/** Failures that mean the address, the credentials or the database name given are wrong: the user's to fix. */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  '28P01',
  '28000',
  '3D000',
]);

async function asInput<T>(attempt: Promise<T>, hint: string): Promise<T> {
  try {
    return await attempt;
  } catch (error) {
    if (UNREACHABLE.has((error as { code?: string }).code ?? ''))
      throw new InputError(`${(error as Error).message}; ${hint}`);
    throw error;
  }
}

function option(values: Record<string, unknown>, name: 'from' | 'to'): StoreTarget {
  const spec = values[name];
  if (typeof spec !== 'string' || !spec.trim())
    throw new InputError(`store copy needs --${name} STORE\nUsage: ${usage}`);
  return parseStoreSpec(spec.trim(), `--${name}`);
}

function table(counts: CopyCounts): string {
  const rows = (Object.keys(LABELS) as RecordKind[]).map((kind) => [
    LABELS[kind],
    String(counts[kind]?.found ?? 0),
    `(${counts[kind]?.added ?? 0} new)`,
  ]);
  const width = Math.max(...rows.map((r) => r[0].length));
  const numbers = Math.max(...rows.map((r) => r[1].length));
  return rows
    .map(([label, found, added]) => `  ${label.padEnd(width)}  ${found.padStart(numbers)}  ${added}`)
    .join('\n');
}

export const storeCommand: Command = {
  name: 'store',
  summary: 'migrate the results store, or copy one store into another (e.g. SQLite into PostgreSQL)',
  usage,
  options: { from: { type: 'string' }, to: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values, positionals }) {
    const [action, ...extra] = positionals;
    if (extra.length) throw new InputError(`unexpected argument ${extra.join(' ')}\nUsage: ${usage}`);
    if (action === 'migrate') {
      const target = storeTarget();
      const store = openNew(target);
      const report = await asInput(store.migrate(), 'check JUDGEFLOW_STORE').finally(() => store.close());
      if (values.json) console.log(JSON.stringify({ store: storeLocation(target), ...report }, null, 2));
      else if (report.applied.length)
        console.log(
          `Results store ${storeLocation(target)}: applied ${report.applied.map((m) => `${m.version} (${m.name})`).join(', ')}; schema is at version ${report.version}.`,
        );
      else
        console.log(
          `Results store ${storeLocation(target)}: schema already at version ${report.version}; nothing to do.`,
        );
      return 0;
    }
    if (action === 'copy') {
      const fromTarget = option(values, 'from');
      const toTarget = option(values, 'to');
      const [from, to] = [storeLocation(fromTarget), storeLocation(toTarget)];
      if (from === to) throw new InputError(`--from and --to are the same store (${from}); name two different stores`);
      if (!(await asInput(storeExists(fromTarget), 'check --from')))
        throw new InputError(`there is no results store at ${from} (--from); nothing to copy`);
      const source = openNew(fromTarget);
      const target = openNew(toTarget);
      try {
        const { version } = await asInput(target.migrate(), 'check --to');
        const counts = await copyStore(source, target);
        if (values.json) console.log(JSON.stringify({ from, to, schemaVersion: version, counts }, null, 2));
        else
          console.log(
            `Copied ${from} into ${to} (schema version ${version}):\n${table(counts)}\nRunning it again adds nothing; the target keeps its own store id (and so its own default task queue).`,
          );
        return 0;
      } finally {
        await source.close();
        await target.close();
      }
    }
    throw new InputError(
      `${action ? `unknown action "${action}"` : 'missing action'}; expected migrate or copy\nUsage: ${usage}`,
    );
  },
};
