import { csvRecords, restoreCell, toCsv } from '../../core/io/csv';
import type { Answer, StudyRecord } from '../../core/study/types';
import type { ResultsStore } from '../../core/model/store';
import { InputError } from '../../core/model/inputError';
import { readText } from '../../core/io/dataFiles';

/** Every recorded annotation of a study, one row each, for analysis elsewhere (and `study import` reads the CSV back). */
export const EXPORT_COLUMNS = [
  'study',
  'assignment_id',
  'annotator',
  'query_id',
  'left',
  'right',
  'choice',
  'winner',
  'reason',
  'serious_error',
  'error_type',
  'comment',
  'revision',
  'submitted_at',
  'source',
] as const;

export async function exportAnnotations(
  store: ResultsStore,
  study: StudyRecord,
  format: 'csv' | 'jsonl',
): Promise<string> {
  const labels = new Map((await store.studies.annotators(study.name)).map((a) => [a.annotatorId, a.label]));
  const items = new Map((await store.studies.studyItems(study.name)).map((it) => [it.itemId, it]));
  const rows = (await store.studies.annotations(study.name)).map((a) => ({
    study: study.name,
    assignment_id: a.assignmentId,
    annotator: labels.get(a.annotatorId) ?? a.annotatorId,
    query_id: items.get(a.itemId)!.queryId,
    left: a.left,
    right: a.right,
    choice: a.answer.choice,
    winner: a.answer.choice === 'A' ? a.left : a.answer.choice === 'B' ? a.right : 'tie',
    reason: a.answer.reason,
    serious_error: a.answer.seriousError,
    error_type: a.answer.errorType,
    comment: a.answer.comment,
    revision: a.revision,
    submitted_at: a.submittedAt,
    source: a.source,
  }));
  if (format === 'jsonl') return rows.map((r) => JSON.stringify(r)).join('\n') + (rows.length ? '\n' : '');
  return toCsv([[...EXPORT_COLUMNS], ...rows.map((r) => EXPORT_COLUMNS.map((c) => r[c]))]);
}

/** The fields an imported row must (or may) give, and the default column that holds each. */
const IMPORT_FIELDS = {
  annotator: 'annotator',
  query: 'query_id',
  left: 'left',
  right: 'right',
  choice: 'choice',
  reason: 'reason',
  seriousError: 'serious_error',
  errorType: 'error_type',
  comment: 'comment',
  submittedAt: 'submitted_at',
} as const;
type ImportField = keyof typeof IMPORT_FIELDS;
const REQUIRED: ImportField[] = ['annotator', 'query', 'left', 'right', 'choice'];

/** "annotator=worker_id,query=question_id,..." → field → column. */
export function parseColumnMap(text: string | undefined): Record<ImportField, string> {
  const map: Record<string, string> = { ...IMPORT_FIELDS };
  for (const part of (text ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [field, column] = part.split('=').map((s) => s.trim());
    if (!(field in IMPORT_FIELDS) || !column)
      throw new InputError(
        `--columns ${part}: expected FIELD=COLUMN with FIELD one of ${Object.keys(IMPORT_FIELDS).join(', ')}`,
      );
    map[field] = column;
  }
  return map as Record<ImportField, string>;
}

const BOOL: Record<string, boolean> = {
  '': false,
  true: true,
  false: false,
  '1': true,
  '0': false,
  yes: true,
  no: false,
  y: true,
  n: false,
};

/**
 * Annotations collected elsewhere (a crowd platform's CSV), validated row by row: every problem is reported with its
 * line number, and nothing is written unless the whole file is valid.
 */
export async function importAnnotations(
  store: ResultsStore,
  study: StudyRecord,
  file: string,
  columns: Record<ImportField, string>,
): Promise<number> {
  const records = csvRecords(readText(file, 'annotations file'), file);
  if (!records.length) throw new InputError(`${file}: empty; expected a header row`);
  const [header, ...rows] = records;
  const index = new Map(header.cells.map((c, i) => [c.trim(), i]));
  const missing = REQUIRED.filter((f) => !index.has(columns[f]));
  if (missing.length)
    throw new InputError(
      `${file}: missing column(s) ${missing.map((f) => `"${columns[f]}" (${f})`).join(', ')}; header has: ${header.cells.join(', ')}. Map yours with --columns ${missing.map((f) => `${f}=YOUR_COLUMN`).join(',')}`,
    );
  const items = new Set((await store.studies.studyItems(study.name)).map((it) => it.itemId));
  const o = study.spec.options;
  const reasonIds = new Map(
    o.reasons.flatMap((r) => [
      [r.id.toLowerCase(), r.id],
      [r.label.toLowerCase(), r.id],
    ]),
  );
  const typeIds = new Map(
    o.errorTypes.flatMap((t) => [
      [t.id.toLowerCase(), t.id],
      [t.label.toLowerCase(), t.id],
    ]),
  );
  const errors: string[] = [];
  const out: Array<{
    annotator: string;
    itemId: string;
    left: string;
    right: string;
    answer: Answer;
    submittedAt: string;
  }> = [];
  const now = new Date().toISOString();
  for (const { line, cells } of rows) {
    // The formula guard of the export is undone, and a comment kept exactly as written: export → import is lossless.
    const raw = (f: ImportField) => (index.has(columns[f]) ? restoreCell(cells[index.get(columns[f])!] ?? '') : '');
    const get = (f: ImportField) => (f === 'comment' ? raw(f) : raw(f).trim());
    const problems: string[] = [];
    const [annotator, query, left, right] = [get('annotator'), get('query'), get('left'), get('right')];
    if (!annotator) problems.push(`empty ${columns.annotator}`);
    if (left === right) problems.push(`${columns.left} and ${columns.right} are the same copilot "${left}"`);
    const itemId = `${query}|${[left, right].sort().join('|')}`;
    if (left !== right && !items.has(itemId))
      problems.push(`query "${query}" with copilots "${left}" and "${right}" is not an item of study ${study.name}`);
    const rawChoice = get('choice');
    const choice =
      /^a$/i.test(rawChoice) || rawChoice === left
        ? 'A'
        : /^b$/i.test(rawChoice) || rawChoice === right
          ? 'B'
          : /^tie$/i.test(rawChoice)
            ? 'tie'
            : null;
    if (!choice)
      problems.push(`${columns.choice} "${rawChoice}": expected A, B, tie or one of the two copilots' names`);
    const rawReason = get('reason');
    const reason = rawReason ? (reasonIds.get(rawReason.toLowerCase()) ?? null) : null;
    if (rawReason && !reason)
      problems.push(`${columns.reason} "${rawReason}": expected one of ${o.reasons.map((r) => r.id).join(', ')}`);
    if (choice && choice !== 'tie' && !reason) problems.push(`${columns.reason} is required when a response wins`);
    if (choice === 'tie' && reason)
      problems.push(
        `${columns.reason} "${rawReason}" given for a tie: a tie has no winning response; leave ${columns.reason} empty`,
      );
    const rawSerious = get('seriousError').toLowerCase();
    const seriousError = BOOL[rawSerious];
    if (seriousError === undefined)
      problems.push(`${columns.seriousError} "${rawSerious}": expected true/false, 1/0 or yes/no`);
    const rawType = get('errorType');
    const errorType = rawType ? (typeIds.get(rawType.toLowerCase()) ?? null) : null;
    if (rawType && !errorType)
      problems.push(`${columns.errorType} "${rawType}": expected one of ${o.errorTypes.map((t) => t.id).join(', ')}`);
    if (seriousError && !errorType)
      problems.push(`${columns.errorType} is required when ${columns.seriousError} is true`);
    if (seriousError && choice === 'tie') problems.push('a tie cannot flag a serious error in a rejected response');
    const rawTime = get('submittedAt');
    if (rawTime && Number.isNaN(Date.parse(rawTime)))
      problems.push(`${columns.submittedAt} "${rawTime}" is not a date`);
    if (problems.length) errors.push(`${file}:${line}: ${problems.join('; ')}`);
    else
      out.push({
        annotator,
        itemId,
        left,
        right,
        answer: {
          choice: choice!,
          reason,
          seriousError: Boolean(seriousError),
          errorType: seriousError ? errorType : null,
          comment: get('comment').trim() ? get('comment') : null,
        },
        submittedAt: rawTime ? new Date(rawTime).toISOString() : now,
      });
  }
  if (errors.length)
    throw new InputError(
      `${errors.length} invalid row(s); nothing was imported:\n${errors.slice(0, 50).join('\n')}${errors.length > 50 ? `\n… and ${errors.length - 50} more` : ''}`,
    );
  return store.studies.importAnnotations(study.name, out);
}
