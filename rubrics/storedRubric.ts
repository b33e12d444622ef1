import type { LoadedRubric } from '../core/model/protocol';
import type { ResultsStore } from '../core/model/store';
import { protocolFor } from './index';

// Versions are content hashes, so a version always rebuilds to the same rubric, whichever store it came from.
const rebuilt = new Map<string, LoadedRubric>();

/**
 * A rubric version stored with runs, rebuilt from the results store (files on disk may have changed since), or null
 * when the store does not hold it. Resumed runs judge with exactly the rubric they started with; `rubric diff` and
 * `rejudge` read old versions the same way.
 */
export async function storedRubric(store: ResultsStore, version: string): Promise<LoadedRubric | null> {
  const cached = rebuilt.get(version);
  if (cached) return cached;
  const stored = await store.getRubric(version);
  if (!stored) return null;
  const protocol = protocolFor(stored.protocol);
  const rubric = protocol.rubricFromContent(stored.content as Record<string, unknown>, protocol.defaultRubricDir);
  rebuilt.set(version, rubric);
  return rubric;
}
