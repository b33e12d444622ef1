import crypto from 'node:crypto';
import { dealAssignments, planAssignments, planItems } from '../../core/study/design';
import {
  ACTIVE_UNIFORM_SHARE,
  activeSelection,
  disagreementModel,
  disagreementProbabilities,
  drawItems,
  squaredDisagreement,
  type StudySelection,
} from '../../core/study/active';
import { preferenceOf, toFacts } from '../../core/study/analysis';
import type { StudyItem } from '../../core/study/design';
import type { StudyRecord } from '../../core/study/types';
import type { ResultsStore } from '../../core/model/store';
import { seededRandom } from '../../core/stats/random';
import { InputError } from '../../core/model/inputError';
import { readText } from '../../core/io/dataFiles';
import { DEFAULT_STUDY_OPTIONS_FILE, loadStudyOptions } from '../../rubrics/study/options';
import { parseEvery } from '../commands/schedule';

export interface CreateStudyArgs {
  runId: string;
  name?: string;
  copilots?: string[];
  queries?: number;
  queryFile?: string;
  perItem: number;
  seed?: string;
  deadline?: string;
  remindBefore?: string;
  optionsFile?: string;
  /** uniform (default): every pair on the chosen queries; active: items drawn by the judge's uncertainty (core/study/active.ts). */
  select?: 'uniform' | 'active';
  /** Active selection: the expected number of items to annotate. */
  budget?: number;
  /** Active selection by where annotators and this judge disagreed in an earlier study (its name), not by the judge's uncertainty. */
  disagreementFrom?: string;
  now?: Date;
}

export const STUDY_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/** "14d" from now, or an ISO date/time. */
function deadlineFrom(text: string, now: Date): string {
  if (/^\d+\s*[smhdw]$/.test(text.trim()))
    return new Date(now.getTime() + parseEvery(text, '--deadline')).toISOString();
  const t = Date.parse(text);
  if (Number.isNaN(t))
    throw new InputError(`--deadline ${text}: expected a duration (14d, 36h) or an ISO date (2026-12-24T18:00:00Z)`);
  if (t <= now.getTime()) throw new InputError(`--deadline ${text} is in the past`);
  return new Date(t).toISOString();
}

/** Query ids from a file: one id per line, or JSON Lines with an "id" field (a snapshot export works as is). */
function queryIdsFromFile(file: string): string[] {
  const lines = readText(file, 'query file').split(/\r?\n/);
  const ids: string[] = [];
  lines.forEach((line, i) => {
    const t = line.trim();
    if (!t || t.startsWith('#')) return;
    if (t.startsWith('{')) {
      let id: unknown;
      try {
        id = JSON.parse(t).id;
      } catch (e) {
        throw new InputError(`${file}:${i + 1}: not valid JSON (${(e as Error).message})`);
      }
      if (typeof id !== 'string' || !id) throw new InputError(`${file}:${i + 1}: a JSON line needs a string "id"`);
      ids.push(id);
    } else ids.push(t);
  });
  return ids;
}

/** Design a study over a finished run's stored responses and store it (items, assignments). Nothing is written on bad input. */
export async function designStudy(
  store: ResultsStore,
  args: CreateStudyArgs,
): Promise<StudyRecord & { items: number; assignments: number }> {
  const now = args.now ?? new Date();
  const run = await store.getRun(args.runId);
  if (!run)
    throw new InputError(`run ${args.runId} is not in the results store ${store.location} (see judgeflow runs)`);
  if (run.status !== 'completed')
    throw new InputError(`run ${args.runId} is ${run.status}; a study needs a completed run`);
  const name = args.name ?? `study-${args.runId}`;
  if (!STUDY_NAME.test(name)) throw new InputError(`study name "${name}": use letters, digits, ".", "_" and "-"`);
  if (await store.studies.getStudy(name))
    throw new InputError(`a study named ${name} already exists; pick another --name`);
  const copilots = args.copilots ?? run.copilots;
  const unknown = copilots.filter((c) => !run.copilots.includes(c));
  if (unknown.length)
    throw new InputError(
      `--copilots: ${unknown.join(', ')} not in run ${args.runId} (it has ${run.copilots.join(', ')})`,
    );
  if (new Set(copilots).size < 2)
    throw new InputError('--copilots: a pairwise study needs at least two different copilots');
  if (!Number.isInteger(args.perItem) || args.perItem < 1 || args.perItem > 100)
    throw new InputError(`--per-item ${args.perItem}: expected a whole number from 1 to 100`);
  if (args.queries !== undefined && args.queryFile)
    throw new InputError('give --queries N or --query-file F, not both');
  const select = args.select ?? 'uniform';
  if (select !== 'uniform' && select !== 'active')
    throw new InputError(`--select ${String(select)}: expected uniform or active`);
  if (select === 'active' && (args.queries !== undefined || args.queryFile))
    throw new InputError(
      '--select active draws from every item of the run (its inclusion probabilities cover them all): drop --queries / --query-file, and set how many items with --budget N',
    );
  if (select === 'uniform' && args.budget !== undefined) throw new InputError('--budget N goes with --select active');

  const snapshot = (await store.snapshotQueries(run.snapshotId)).map((q) => q.id);
  const seed = args.seed ?? name;
  let queryIds = snapshot;
  if (args.queryFile) {
    queryIds = queryIdsFromFile(args.queryFile);
    const missing = queryIds.filter((id) => !snapshot.includes(id));
    if (missing.length)
      throw new InputError(
        `${args.queryFile}: query id(s) not in run ${args.runId}: ${missing.slice(0, 10).join(', ')}${missing.length > 10 ? ', …' : ''}`,
      );
    if (new Set(queryIds).size !== queryIds.length)
      throw new InputError(`${args.queryFile}: a query id is listed twice`);
  } else if (args.queries !== undefined) {
    if (!Number.isInteger(args.queries) || args.queries < 1)
      throw new InputError(`--queries ${args.queries}: expected a positive whole number`);
    if (args.queries > snapshot.length)
      throw new InputError(`--queries ${args.queries}: run ${args.runId} has only ${snapshot.length} queries`);
    const rand = seededRandom(`${seed}/queries`);
    const keyed = snapshot.map((id) => ({ id, k: rand() }));
    const chosen = new Set(
      keyed
        .sort((a, b) => a.k - b.k)
        .slice(0, args.queries)
        .map((x) => x.id),
    );
    queryIds = snapshot.filter((id) => chosen.has(id));
  }

  const responses = new Map((await store.responses(args.runId)).map((r) => [`${r.queryId}|${r.copilot}`, r.status]));
  const planned0 = planItems(queryIds, copilots, (q, c) => responses.get(`${q}|${c}`) ?? 'missing');
  const { excluded } = planned0;
  let items = planned0.items;
  if (!items.length)
    throw new InputError(`no (query, pair) item has both responses in run ${args.runId}; nothing to annotate`);
  if (args.disagreementFrom !== undefined && select !== 'active')
    throw new InputError('--disagreement-from needs --select active');
  let selection: StudySelection = { method: 'uniform' };
  if (select === 'active') {
    const budget = args.budget ?? Math.min(items.length, Math.max(30, Math.round(items.length / 5)));
    if (!Number.isInteger(budget) || budget < 1 || budget > items.length)
      throw new InputError(`--budget ${budget}: expected a whole number from 1 to the run's ${items.length} items`);
    // Every sample of every judge of an answer: their spread is the judge's uncertainty about it.
    const totals = new Map<string, number[]>();
    for (const j of await store.judgments(args.runId, run.rubricVersion))
      if (j.status === 'ok' && j.total !== null)
        totals.set(`${j.queryId}|${j.copilot}`, [...(totals.get(`${j.queryId}|${j.copilot}`) ?? []), j.total]);
    const active = args.disagreementFrom
      ? await selectionByDisagreement(store, items, totals, budget, seed, args.disagreementFrom)
      : activeSelection(items, (q, c) => totals.get(`${q}|${c}`) ?? [], budget, seed);
    if (!active.items.length) throw new InputError(`--budget ${budget}: the draw selected no item; raise the budget`);
    items = active.items;
    selection = active.selection;
    queryIds = queryIds.filter((q) => items.some((it) => it.queryId === q));
  }
  const options = loadStudyOptions(args.optionsFile ?? DEFAULT_STUDY_OPTIONS_FILE);
  const deadline = args.deadline ? deadlineFrom(args.deadline, now) : null;
  let remindAt: string | null = null;
  if (args.remindBefore) {
    if (!deadline) throw new InputError('--remind-before needs --deadline');
    remindAt = new Date(Date.parse(deadline) - parseEvery(args.remindBefore, '--remind-before')).toISOString();
  }
  const planned = planAssignments(items, args.perItem, seed);
  const study: StudyRecord = {
    name,
    runId: args.runId,
    status: 'open',
    createdAt: now.toISOString(),
    closedAt: null,
    workflowId: `study-${name}`,
    spec: {
      copilots: [...copilots].sort(),
      queryIds,
      perItem: args.perItem,
      seed,
      deadline,
      remindBefore: remindAt,
      options,
      excluded,
      selection,
    },
  };
  await store.studies.createStudy(
    study,
    items,
    planned.map((p) => ({ ...p, assignmentId: newOpaqueId() })),
  );
  return { ...study, items: items.length, assignments: planned.length };
}

/** Assignment ids and tokens are random: they say nothing about the item, its copilots or its order. */
export const newOpaqueId = () => crypto.randomBytes(12).toString('base64url');
export const newToken = () => crypto.randomBytes(24).toString('base64url');
export const tokenHash = (token: string) => crypto.createHash('sha256').update(token).digest('hex');

/**
 * Invite N annotators: one secret token each (only its hash is stored) and their share of the assignments, dealt so
 * that loads differ by at most one and no one sees an item twice. Done once per study.
 */
export async function inviteAnnotators(
  store: ResultsStore,
  name: string,
  count: number,
): Promise<Array<{ label: string; token: string; assignments: number }>> {
  const study = await store.studies.getStudy(name);
  if (!study) throw new InputError(`no study named ${name} (see judgeflow study list)`);
  if (study.status !== 'open') throw new InputError(`study ${name} is closed`);
  if ((await store.studies.annotators(name)).some((a) => a.source === 'app'))
    throw new InputError(`study ${name} already has its annotators; their links were printed when they were invited`);
  if (!Number.isInteger(count) || count < study.spec.perItem)
    throw new InputError(
      `--annotators ${count}: need at least --per-item (${study.spec.perItem}) annotators so that no one sees an item twice`,
    );
  const assignments = await store.studies.studyAssignments(name);
  const bySlot = new Map(assignments.map((a) => [a.slot, a]));
  const deal = dealAssignments(
    assignments.map((a) => a.slot),
    count,
    study.spec.seed,
  );
  const people = Array.from({ length: count }, (_, i) => ({
    annotatorId: `ann-${newOpaqueId()}`,
    label: `annotator-${String(i + 1).padStart(2, '0')}`,
    token: newToken(),
  }));
  await store.studies.addAnnotators(
    name,
    people.map((p) => ({
      annotatorId: p.annotatorId,
      study: name,
      label: p.label,
      source: 'app' as const,
      tokenHash: tokenHash(p.token),
    })),
    deal.map((d) => ({
      assignmentId: bySlot.get(d.slot)!.assignmentId,
      annotatorId: people[d.annotator].annotatorId,
      order: d.order,
    })),
  );
  return people.map((p, i) => ({
    label: p.label,
    token: p.token,
    assignments: deal.filter((d) => d.annotator === i).length,
  }));
}

export function annotationLink(baseUrl: string, token: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/annotate#token=${token}`;
}

const meanOf = (xs: number[] | undefined) => (xs && xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);

/** The judge's gap (first − second) of an item from every total of each answer; 0 when either answer has none. */
const gapFrom = (totals: Map<string, number[]>) => (it: StudyItem) => {
  const a = meanOf(totals.get(`${it.queryId}|${it.first}`));
  const b = meanOf(totals.get(`${it.queryId}|${it.second}`));
  return a === null || b === null ? 0 : a - b;
};

/**
 * Active selection by a disagreement model (core/study/active.ts): fitted on the earlier study's annotated items
 * (annotators' lean against its run's judge), applied to this run's items by this run's judge gaps.
 */
async function selectionByDisagreement(
  store: ResultsStore,
  items: StudyItem[],
  totals: Map<string, number[]>,
  budget: number,
  seed: string,
  earlierName: string,
) {
  const earlier = await store.studies.getStudy(earlierName);
  if (!earlier)
    throw new InputError(`--disagreement-from ${earlierName}: no such study in the results store ${store.location}`);
  const earlierRun = await store.getRun(earlier.runId);
  const earlierTotals = new Map<string, number[]>();
  for (const j of earlierRun ? await store.judgments(earlier.runId, earlierRun.rubricVersion) : [])
    if (j.status === 'ok' && j.total !== null)
      earlierTotals.set(`${j.queryId}|${j.copilot}`, [
        ...(earlierTotals.get(`${j.queryId}|${j.copilot}`) ?? []),
        j.total,
      ]);
  const facts = toFacts(await store.studies.annotations(earlierName));
  const earlierItems = await store.studies.studyItems(earlierName);
  const lean = new Map<string, number[]>();
  const byId = new Map(earlierItems.map((it) => [it.itemId, it]));
  for (const f of facts) {
    const it = byId.get(f.itemId);
    if (!it) continue;
    const pref = preferenceOf(f, it);
    lean.set(f.itemId, [...(lean.get(f.itemId) ?? []), pref === 'first' ? 1 : pref === 'second' ? -1 : 0]);
  }
  const gapEarlier = gapFrom(earlierTotals);
  const labelled = earlierItems.filter(
    (it) =>
      lean.has(it.itemId) &&
      meanOf(earlierTotals.get(`${it.queryId}|${it.first}`)) !== null &&
      meanOf(earlierTotals.get(`${it.queryId}|${it.second}`)) !== null,
  );
  if (!labelled.length)
    throw new InputError(
      `--disagreement-from ${earlierName}: the study has no annotated item with both judge totals; annotate it first, or select by the judge's uncertainty (drop --disagreement-from)`,
    );
  const model = disagreementModel(labelled, gapEarlier, (it) =>
    squaredDisagreement(meanOf(lean.get(it.itemId))!, gapEarlier(it)),
  );
  const p = disagreementProbabilities(items, gapFrom(totals), model, budget);
  const chosen = drawItems(items, p, seed);
  const index = new Map(items.map((it, i) => [it.itemId, i]));
  const selection: StudySelection = {
    method: 'active',
    basis: 'disagreement',
    disagreementFrom: earlierName,
    budget,
    uniformShare: ACTIVE_UNIFORM_SHARE,
    floor: Math.min(...p),
    candidates: items.length,
    probabilities: Object.fromEntries(chosen.map((it) => [it.itemId, p[index.get(it.itemId)!]])),
  };
  return { items: chosen, selection };
}
