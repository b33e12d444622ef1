import type { LabelsOf } from '../core/snapshots/snapshots';
import type { SnapshotRecord } from '../core/model/store';
import { protocols } from '../rubrics';

/** How to read a snapshot's queries: its protocol's labels and query fields. */
export interface QueryReading {
  labelsOf: LabelsOf;
  queryFields: readonly string[];
}

/**
 * The reading of the protocol the snapshots were made for (their meta's `protocol`). Snapshots that do not say
 * (imported before runs recorded it), or that disagree, are read with every protocol's labels and fields.
 */
export function queryReadingOf(...snapshots: SnapshotRecord[]): QueryReading {
  const ids = new Set(snapshots.map((s) => (s.meta as { protocol?: unknown }).protocol));
  const only = ids.size === 1 ? protocols.find((p) => ids.has(p.id)) : undefined;
  const readers = only ? [only] : protocols;
  return {
    labelsOf: (q) => Object.assign({}, ...readers.map((p) => p.labelsOf(q))),
    queryFields: [...new Set(readers.flatMap((p) => p.queryFields))],
  };
}
