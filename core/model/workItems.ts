import type { JudgeUnit } from './store';

/**
 * The work items of a run's judging: every protocol unit once per sample and per judge, ordered sample by sample, then
 * unit by unit, with the judges of one (sample, unit) adjacent — so item i belongs to judge i mod judges.length (the
 * workflow runs each judge's items within that judge's own limits) and every chunk of items keeps all judges busy.
 *
 * Sample s shows a unit's responses rotated by s positions: over k samples of a k-response unit every response sits in
 * every position once, so position effects average out of the reported means (and the design's balance across queries
 * holds for each sample). A unit's first sample and the single judge '' leave their fields out, so a run asked once
 * plans exactly the units it planned before samples existed.
 */
export function workItems(units: JudgeUnit[], samples: number, judges: string[]): JudgeUnit[] {
  const items: JudgeUnit[] = [];
  for (let sample = 0; sample < samples; sample++)
    for (const unit of units)
      for (const judge of judges)
        items.push({
          queryId: unit.queryId,
          copilots: rotate(unit.copilots, sample),
          ...(sample ? { sample } : {}),
          ...(judge ? { judge } : {}),
          ...(unit.kind ? { kind: unit.kind } : {}),
        });
  return items;
}

function rotate<T>(xs: T[], by: number): T[] {
  if (xs.length < 2) return [...xs];
  const k = by % xs.length;
  return [...xs.slice(k), ...xs.slice(0, k)];
}
