import { canonicalJson, contentHash } from '../../../core/model/hashing';
import type { ResultsStore } from '../../../core/model/store';
import type { WorldCall } from '../../../core/model/agentSteps';
import { AdapterError } from '../types';

/**
 * World snapshots (issue 34): what the tools answered, held still so two agent configurations are judged against the same
 * tool results. A run in `record` mode writes each call's result into its recording (named by the run id); a world's id
 * is the hash of its content (`world-…`), so the same tool results always have the same id and a recording that grows
 * (a resumed run asking more) gets a new one. `replay` answers from the recording whose content has that id.
 */

/** The call's identity in a world: the tool and its arguments in canonical form (keys sorted), hashed. */
export function worldKey(tool: string, args: Record<string, unknown>): string {
  return contentHash(`${tool}\u0000${canonicalJson(args)}`, 32);
}

/** A world's id: the hash of every call's key and result, in key order. */
export function worldIdOf(calls: WorldCall[]): string {
  const lines = [...calls]
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((c) => `${c.key}\t${c.isError ? 'error' : 'ok'}\t${contentHash(c.result, 64)}`);
  return `world-${contentHash(lines.join('\n'), 16)}`;
}

/** Every world in the store: its id, the recording that holds it, and its calls. */
export async function listWorlds(
  store: ResultsStore,
): Promise<Array<{ id: string; recording: string; calls: WorldCall[]; firstAt: string; lastAt: string }>> {
  const out = [];
  for (const r of await store.worldRecordings()) {
    const calls = await store.worldCalls(r.recording);
    out.push({ id: worldIdOf(calls), recording: r.recording, calls, firstAt: r.firstAt, lastAt: r.lastAt });
  }
  return out;
}

/** The calls of world `id`; a config error naming the worlds there are when there is none with that id. */
export async function worldById(store: ResultsStore, id: string): Promise<{ recording: string; calls: WorldCall[] }> {
  const worlds = await listWorlds(store);
  const found = worlds.find((w) => w.id === id);
  if (!found)
    throw new AdapterError(
      'config',
      `no world snapshot ${id} in the results store (${worlds.length ? `there are: ${worlds.map((w) => w.id).join(', ')}` : 'it holds none'}); record one with tools.mode: record, and list them with judgeflow world list`,
    );
  return found;
}

/** What changed between two worlds: calls only one holds, and calls both hold with different results. */
export function diffWorlds(
  a: WorldCall[],
  b: WorldCall[],
): { onlyA: WorldCall[]; onlyB: WorldCall[]; changed: Array<{ a: WorldCall; b: WorldCall }>; same: number } {
  const byKey = new Map(b.map((c) => [c.key, c]));
  const keysA = new Set(a.map((c) => c.key));
  const changed: Array<{ a: WorldCall; b: WorldCall }> = [];
  let same = 0;
  for (const c of a) {
    const other = byKey.get(c.key);
    if (!other) continue;
    if (other.result === c.result && other.isError === c.isError) same++;
    else changed.push({ a: c, b: other });
  }
  return { onlyA: a.filter((c) => !byKey.has(c.key)), onlyB: b.filter((c) => !keysA.has(c.key)), changed, same };
}
