import type { RecordCounts, RecordKind, ResultsStore, StoreRecord } from '../core/model/store';

/** What `judgeflow store copy` reports per kind of record: how many the source holds and how many were new to the target. */
export type CopyCounts = Partial<Record<RecordKind, { found: number; added: number }>>;

/** Rows a record stands for, counted the way importRecords counts what it added. */
const rowsOf = (r: StoreRecord) =>
  r.kind === 'judgeUnits' ? r.units.length : r.kind === 'llmCalls' ? r.calls.length : 1;

/**
 * Copy every record of `from` into `to`, batch by batch (each batch atomic, each record first-write-wins), so an
 * interrupted copy can simply be run again and a repeated one adds nothing. `to` keeps its own identity.
 */
export async function copyStore(
  from: ResultsStore,
  to: ResultsStore,
  onBatch: (counts: CopyCounts) => void = () => undefined,
): Promise<CopyCounts> {
  const counts: CopyCounts = {};
  const entry = (kind: RecordKind) => (counts[kind] ??= { found: 0, added: 0 });
  for await (const batch of from.exportRecords()) {
    for (const record of batch) entry(record.kind).found += rowsOf(record);
    const added: RecordCounts = await to.importRecords(batch);
    for (const [kind, n] of Object.entries(added)) entry(kind as RecordKind).added += n;
    onBatch(counts);
  }
  return counts;
}
