import type { ResultsStore, SnapshotRecord } from './store';
import { normalizeText } from './text';
import type { Query } from './types';
import { contentHash, InputError } from './validate';
import { toCsv } from './csv';

/**
 * Snapshots as first-class, immutable objects: a set of queries whose id is the content hash of those queries,
 * with provenance (how it was made), its parent (the snapshot it refreshes) and per-category counts.
 * They live in the results store (core/store.ts); generation and curation keep their intermediate results there
 * too (putWork/getWork), and scheduled refresh its lineage (recordScheduleSnapshot).
 */

/** How a snapshot was made. Stored as the snapshot's meta (JSON); every field optional except the generator. */
export interface SnapshotMeta {
  /** 'import' (a run's query file), 'lattice-generate', 'cab-curate' */
  generator: string;
  /** The protocol whose query format the snapshot follows ('lattice', 'cab'). */
  protocol?: string;
  /** Content hash of the prompt templates used to generate or tag the queries. */
  promptsVersion?: string;
  model?: string;
  baseURL?: string;
  /** Source file (traffic, imported queries) and the hash of its bytes. */
  source?: string;
  sourceHash?: string;
  /** The options the snapshot was made with (seed, per-cell, target, thresholds ...). */
  params?: Record<string, unknown>;
  /** Per-label query counts: { category: {...}, task: {...}, tags: {...} } (only labels present). */
  counts?: Record<string, Record<string, number>>;
  /** Curation: one entry per stage with its in/out counts. */
  stages?: Array<Record<string, unknown>>;
  /** Scheduled refresh: the schedule and the workflow that made it. */
  schedule?: string;
  workflowId?: string;
  [key: string]: unknown;
}

/** Snapshot ids are content hashes: the same queries always make the same snapshot, however they were made. */
export function snapshotIdOf(queries: Query[]): string {
  return `snap-${contentHash(queries)}`;
}

const LABELS = ['category', 'task', 'tags'] as const;

/** Per-label counts, e.g. { category: { C1: 16, ... }, task: { T1: 5, ... } }; labels no query has are left out. */
export function labelCounts(queries: Query[]): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const label of LABELS) {
    for (const q of queries) {
      const value = q[label];
      if (typeof value !== 'string') continue;
      const counts = (out[label] ??= {});
      counts[value] = (counts[value] ?? 0) + 1;
    }
  }
  return out;
}

/** Store a snapshot made by a generator; returns its id. Idempotent (same queries → same id → first record kept). */
export async function saveSnapshot(
  store: ResultsStore,
  args: { queries: Query[]; parentId: string | null; meta: SnapshotMeta; createdAt?: string },
): Promise<{ snapshotId: string; created: boolean }> {
  const snapshotId = snapshotIdOf(args.queries);
  const existed = (await store.getSnapshot(snapshotId)) !== null;
  // A refresh that produced exactly its parent's queries must not make the snapshot its own parent.
  const parentId = args.parentId === snapshotId ? null : args.parentId;
  await store.putSnapshot({ snapshotId, createdAt: args.createdAt ?? new Date().toISOString(), parentId, meta: { ...args.meta, counts: labelCounts(args.queries) } }, args.queries);
  return { snapshotId, created: !existed };
}

/** A snapshot id, or a unique prefix of one (as `git` does), resolved against the store. */
export async function resolveSnapshotId(store: ResultsStore, idOrPrefix: string): Promise<SnapshotRecord> {
  const exact = await store.getSnapshot(idOrPrefix);
  if (exact) return exact;
  const ids = await store.snapshotIdsStartingWith(idOrPrefix);
  if (ids.length === 1) return (await store.getSnapshot(ids[0]))!;
  if (ids.length > 1) throw new InputError(`snapshot id "${idOrPrefix}" is ambiguous: ${ids.join(', ')}`);
  throw new InputError(`no snapshot "${idOrPrefix}" in the results store ${store.location} (see judgeflow snapshot list)`);
}

// ---- diff -----------------------------------------------------------------------

export interface SnapshotDiff {
  a: string;
  b: string;
  /** Queries of B whose normalised text is not in A. */
  added: Query[];
  /** Queries of A whose normalised text is not in B. */
  removed: Query[];
  unchanged: number;
  /** Per label and value: count in A, count in B. */
  counts: Record<string, Record<string, { a: number; b: number }>>;
}

/** Compare by normalised text (ids are per snapshot, e.g. t1-c1-01 in every generated snapshot). */
export function diffSnapshots(a: { id: string; queries: Query[] }, b: { id: string; queries: Query[] }): SnapshotDiff {
  const inA = new Set(a.queries.map((q) => normalizeText(q.text)));
  const inB = new Set(b.queries.map((q) => normalizeText(q.text)));
  const ca = labelCounts(a.queries);
  const cb = labelCounts(b.queries);
  const counts: SnapshotDiff['counts'] = {};
  for (const label of new Set([...Object.keys(ca), ...Object.keys(cb)])) {
    const values = [...new Set([...Object.keys(ca[label] ?? {}), ...Object.keys(cb[label] ?? {})])].sort();
    counts[label] = Object.fromEntries(values.map((v) => [v, { a: ca[label]?.[v] ?? 0, b: cb[label]?.[v] ?? 0 }]));
  }
  return {
    a: a.id,
    b: b.id,
    added: b.queries.filter((q) => !inA.has(normalizeText(q.text))),
    removed: a.queries.filter((q) => !inB.has(normalizeText(q.text))),
    unchanged: b.queries.filter((q) => inA.has(normalizeText(q.text))).length,
    counts,
  };
}

// ---- export ---------------------------------------------------------------------

const FIELD_ORDER = ['id', 'text', 'task', 'category', 'tags', 'context', 'history'] as const;

/** A query with only the fields a run config's query file accepts, in a stable order. */
function exportable(q: Query): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of FIELD_ORDER) if (q[key] !== undefined) out[key] = q[key];
  return out;
}

/** JSON Lines exactly as the run config's `queries:` file accepts (LATTICE {id,text,task,category}, CAB {id,text,tags}). */
export function exportJsonl(queries: Query[]): string {
  return queries.map((q) => JSON.stringify(exportable(q))).join('\n') + '\n';
}

/** CSV with a header of the fields present; `history` (a list of turns) as JSON text. */
export function exportCsv(queries: Query[]): string {
  const rows = queries.map(exportable);
  const columns = FIELD_ORDER.filter((key) => rows.some((r) => r[key] !== undefined));
  return toCsv([columns, ...rows.map((r) => columns.map((c) => (c === 'history' && r[c] !== undefined ? JSON.stringify(r[c]) : r[c])))]);
}
