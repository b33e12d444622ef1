import type { ResultsStore, SnapshotRecord } from '../model/store';
import { normalizeText } from './text';
import type { Query } from '../model/types';
import { contentHash } from '../model/hashing';
import { InputError } from '../model/inputError';
import { toCsv } from '../io/csv';

/**
 * Snapshots as first-class, immutable objects: a set of queries whose id is the content hash of those queries,
 * with provenance (how it was made), its parent (the snapshot it refreshes) and per-category counts.
 * They live in the results store (core/model/store.ts); generation and curation keep their intermediate results there
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

/** A protocol's reading of a query's labels (ProtocolModule.labelsOf): label name → values. */
export type LabelsOf = (query: Query) => Record<string, string[]>;

/**
 * Per-label counts, e.g. { category: { C1: 16, ... }, task: { T1: 5, ... } }, labels in name order; labels no query has
 * are left out. A query with several values of a label (CryptoAnalystBench tags) counts once under each.
 */
export function labelCounts(queries: Query[], labelsOf: LabelsOf): Record<string, Record<string, number>> {
  const byLabel: Record<string, Record<string, number>> = {};
  for (const q of queries) {
    for (const [label, values] of Object.entries(labelsOf(q))) {
      const counts = (byLabel[label] ??= {});
      for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
    }
  }
  return Object.fromEntries(
    Object.keys(byLabel)
      .sort()
      .map((label) => [label, byLabel[label]]),
  );
}

/** Store a snapshot made by a generator; returns its id. Idempotent (same queries → same id → first record kept). */
export async function saveSnapshot(
  store: ResultsStore,
  labelsOf: LabelsOf,
  args: { queries: Query[]; parentId: string | null; meta: SnapshotMeta; createdAt?: string },
): Promise<{ snapshotId: string; created: boolean }> {
  const snapshotId = snapshotIdOf(args.queries);
  const existed = (await store.getSnapshot(snapshotId)) !== null;
  // A refresh that produced exactly its parent's queries must not make the snapshot its own parent.
  const parentId = args.parentId === snapshotId ? null : args.parentId;
  await store.putSnapshot(
    {
      snapshotId,
      createdAt: args.createdAt ?? new Date().toISOString(),
      parentId,
      meta: { ...args.meta, counts: labelCounts(args.queries, labelsOf) },
    },
    args.queries,
  );
  return { snapshotId, created: !existed };
}

/** A snapshot id, or a unique prefix of one (as `git` does), resolved against the store. */
export async function resolveSnapshotId(store: ResultsStore, idOrPrefix: string): Promise<SnapshotRecord> {
  const exact = await store.getSnapshot(idOrPrefix);
  if (exact) return exact;
  const ids = await store.snapshotIdsStartingWith(idOrPrefix);
  if (ids.length === 1) return (await store.getSnapshot(ids[0]))!;
  if (ids.length > 1) throw new InputError(`snapshot id "${idOrPrefix}" is ambiguous: ${ids.join(', ')}`);
  throw new InputError(
    `no snapshot "${idOrPrefix}" in the results store ${store.location} (see judgeflow snapshot list)`,
  );
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
export function diffSnapshots(
  a: { id: string; queries: Query[] },
  b: { id: string; queries: Query[] },
  labelsOf: LabelsOf,
): SnapshotDiff {
  const inA = new Set(a.queries.map((q) => normalizeText(q.text)));
  const inB = new Set(b.queries.map((q) => normalizeText(q.text)));
  const ca = labelCounts(a.queries, labelsOf);
  const cb = labelCounts(b.queries, labelsOf);
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

/**
 * A query with only the fields a run config's query file accepts, in a stable order: id, text, the protocol's own
 * fields (ProtocolModule.queryFields), history.
 */
function exportable(q: Query, fields: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of exportOrder(fields)) if (q[key] !== undefined) out[key] = q[key];
  return out;
}

const exportOrder = (fields: readonly string[]) => [
  'id',
  'text',
  ...fields.filter((f) => !['id', 'text', 'history'].includes(f)),
  'history',
];

/** JSON Lines exactly as the run config's `queries:` file accepts (LATTICE {id,text,task,category}, CAB {id,text,tags}). */
export function exportJsonl(queries: Query[], fields: readonly string[]): string {
  return queries.map((q) => JSON.stringify(exportable(q, fields))).join('\n') + '\n';
}

/** CSV with a header of the fields present; `history` (a list of turns) as JSON text. */
export function exportCsv(queries: Query[], fields: readonly string[]): string {
  const rows = queries.map((q) => exportable(q, fields));
  const columns = exportOrder(fields).filter((key) => rows.some((r) => r[key] !== undefined));
  // Structured fields (history, LATTICE's `reference`) as JSON text in their cell.
  return toCsv([
    columns,
    ...rows.map((r) => columns.map((c) => (r[c] !== null && typeof r[c] === 'object' ? JSON.stringify(r[c]) : r[c]))),
  ]);
}
