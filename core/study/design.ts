import { seededRandom, shuffled } from '../stats/random';

/**
 * The design of a pairwise preference study, as pure functions: which (query, copilot pair) items there are, how many
 * times each is shown and on which side each copilot sits, and how the assignments are dealt out to annotators.
 */

export interface StudyItem {
  itemId: string;
  queryId: string;
  /** The pair, unordered: `first` < `second` alphabetically, so an item is the same whichever way it is shown. */
  first: string;
  second: string;
}

export interface PlannedAssignment {
  itemId: string;
  /** Position in the dealing order: copies of one item are consecutive, so slot mod N gives distinct annotators. */
  slot: number;
  left: string;
  right: string;
}

export interface ItemPlan {
  items: StudyItem[];
  /** Pairs left out because one side's response failed or is missing. */
  excluded: { failed: number; missing: number; pairs: number };
}

/** Every unordered pair of `copilots` on every query where both answered. `status(q, c)` is ok | failed | missing. */
export function planItems(
  queryIds: string[],
  copilots: string[],
  status: (queryId: string, copilot: string) => string,
): ItemPlan {
  const sorted = [...copilots].sort();
  const items: StudyItem[] = [];
  const excluded = { failed: 0, missing: 0, pairs: 0 };
  for (const queryId of queryIds)
    for (let i = 0; i < sorted.length; i++)
      for (let j = i + 1; j < sorted.length; j++) {
        const states = [status(queryId, sorted[i]), status(queryId, sorted[j])];
        if (states.every((s) => s === 'ok')) {
          items.push({ itemId: `${queryId}|${sorted[i]}|${sorted[j]}`, queryId, first: sorted[i], second: sorted[j] });
          continue;
        }
        excluded.pairs++;
        if (states.includes('failed')) excluded.failed++;
        else excluded.missing++;
      }
  return { items, excluded };
}

/**
 * Orient each edge (a pair shown once) so that every node is on the left within one of half its edges: an Euler
 * circuit of the graph, with a dummy node joined to every odd-degree node, enters and leaves every node equally often.
 * Returns, per edge, true when the edge's `a` goes on the left.
 */
export function balancedOrientation(edges: Array<[string, string]>, rand: () => number): boolean[] {
  const DUMMY = '\u0000dummy';
  const all: Array<[string, string]> = [...edges];
  const degree = new Map<string, number>();
  for (const [a, b] of edges) for (const n of [a, b]) degree.set(n, (degree.get(n) ?? 0) + 1);
  for (const [node, d] of [...degree].sort(([x], [y]) => (x < y ? -1 : 1))) if (d % 2 === 1) all.push([node, DUMMY]);
  const adjacency = new Map<string, number[]>();
  for (const [i, [a, b]] of all.entries()) for (const n of [a, b]) adjacency.set(n, [...(adjacency.get(n) ?? []), i]);
  for (const [n, list] of adjacency) adjacency.set(n, shuffled(list, rand));
  const used = new Array<boolean>(all.length).fill(false);
  const aLeft = new Array<boolean>(all.length).fill(true);
  // Hierholzer, iterative; traversing edge i from u means u is shown on the left.
  for (const start of shuffled([...adjacency.keys()].sort(), rand)) {
    const stack = [start];
    while (stack.length) {
      const u = stack[stack.length - 1];
      const list = adjacency.get(u)!;
      while (list.length && used[list[list.length - 1]]) list.pop();
      if (!list.length) {
        stack.pop();
        continue;
      }
      const e = list.pop()!;
      used[e] = true;
      const [a, b] = all[e];
      aLeft[e] = a === u;
      stack.push(a === u ? b : a);
    }
  }
  return aLeft.slice(0, edges.length);
}

/**
 * `perItem` assignments per item. Within an item the copies split left/right evenly; the odd copy (odd `perItem`) of
 * every item is oriented by balancedOrientation, so each copilot is on the left in half (±1) of its assignments.
 * Items are dealt in a seeded random order.
 */
export function planAssignments(items: StudyItem[], perItem: number, seed: string): PlannedAssignment[] {
  const rand = seededRandom(`${seed}/assignments`);
  const oddLeft =
    perItem % 2 === 1
      ? balancedOrientation(
          items.map((it) => [it.first, it.second]),
          rand,
        )
      : [];
  const out: PlannedAssignment[] = [];
  let slot = 0;
  const order = shuffled(
    items.map((_, i) => i),
    rand,
  );
  for (const i of order) {
    const item = items[i];
    const sides: boolean[] = [];
    for (let k = 0; k < Math.floor(perItem / 2); k++) sides.push(true, false);
    if (perItem % 2 === 1) sides.push(oddLeft[i]);
    for (const firstLeft of shuffled(sides, rand))
      out.push({
        itemId: item.itemId,
        slot: slot++,
        left: firstLeft ? item.first : item.second,
        right: firstLeft ? item.second : item.first,
      });
  }
  return out;
}

/**
 * Deal assignments to `annotators` people: slot mod N, so loads differ by at most one and, with N ≥ perItem, the copies of
 * an item (consecutive slots) all go to different people. Each person's queue gets its own seeded order.
 */
export function dealAssignments(
  slots: number[],
  annotators: number,
  seed: string,
): Array<{ slot: number; annotator: number; order: number }> {
  const rand = seededRandom(`${seed}/deal/${annotators}`);
  const byAnnotator = new Map<number, number[]>();
  for (const slot of slots) {
    const mine = byAnnotator.get(slot % annotators) ?? [];
    mine.push(slot);
    byAnnotator.set(slot % annotators, mine);
  }
  const out: Array<{ slot: number; annotator: number; order: number }> = [];
  for (const [annotator, mine] of byAnnotator)
    shuffled(mine, rand).forEach((slot, order) => out.push({ slot, annotator, order }));
  return out.sort((a, b) => a.slot - b.slot);
}
