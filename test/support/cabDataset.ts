import fs from 'node:fs';
import path from 'node:path';
import { parseCsv, toCsv } from '../../core/io/csv';
import { CAB_DATASET_SHAPE } from '../../rubrics/cab/dataset';
import { SHARED } from './harness';

/**
 * The CryptoAnalystBench dataset for tests: the published file when `../shared` holds it (CI does), otherwise a
 * CAB-shaped fixture written here (same columns, 198 rows, the 11 categories with the published counts, awkward
 * cells: commas, quotes, non-ASCII; like the published file, no line breaks inside a query), so a fresh clone covers the same behaviour.
 */
export const REAL_CAB_DATASET = path.join(SHARED, 'datasets', 'cryptoanalystbench', 'dataset.csv');
export const HAS_REAL_CAB_DATASET = fs.existsSync(REAL_CAB_DATASET);
export const NEEDS_REAL_CAB_DATASET = 'needs ../shared/datasets/cryptoanalystbench (CI has it)';

/**
 * `test` where the published file is present; elsewhere `test.skip`, chosen at load, with the reason in the test's
 * name and printed once, so a fresh clone's run says what it left out and why.
 */
export function testWithRealCabDataset(name: string, fn: jest.ProvidesCallback, timeout?: number): void {
  if (HAS_REAL_CAB_DATASET) return test(name, fn, timeout);
  if (!announced) {
    announced = true;
    console.log(`Skipping the tests that read the published CryptoAnalystBench file: ${NEEDS_REAL_CAB_DATASET}`);
  }
  test.skip(`${name} [skipped: ${NEEDS_REAL_CAB_DATASET}]`, fn, timeout);
}
let announced = false;

export interface CabRow {
  query: string;
  tags: string;
}

// Distinct lowercase words per slot (capitalised words would read as tickers to the template matcher).
const OPENERS = [
  'could you explain',
  'walk me through',
  'i would like to understand',
  'help me judge',
  'give me your view on',
  'break down',
  'what do analysts say about',
  'summarise',
  'tell me honestly about',
  'dig into',
  'assess',
];
const SUBJECTS = [
  'restaking yields',
  'stablecoin depegs',
  'bridge exploits',
  'validator churn',
  'liquid staking tokens',
  'perpetual funding rates',
  'airdrop farming',
  'layer two sequencers',
  'oracle manipulation',
  'treasury diversification',
  'governance capture',
  'memecoin launchpads',
  'lending pool utilisation',
  'options skew',
  'whale wallet rotation',
  'exchange reserve outflows',
  'token unlock schedules',
  'miner capitulation',
  'real world asset vaults',
  'cross chain messaging',
  'mev auctions',
  'wallet drainer kits',
  'nft floor liquidity',
  'etf creation flows',
  'rollup data costs',
  'dao grant programs',
  'basis trade crowding',
  'insurance fund health',
  'emission halvings',
];
const ANGLES = [
  'for a cautious holder',
  'over the coming quarter',
  'compared with last cycle',
  'given current macro pressure',
  'from an on-chain perspective',
  'with concrete numbers where possible',
  'before i commit capital',
  'in plain words',
  'for a small portfolio',
  'amid regulatory uncertainty',
  'if volatility spikes',
  'for long-term conviction',
  'during thin weekend liquidity',
];
const EXTRAS = [
  '',
  ', and what could go wrong?',
  ' — include sources, "if any"',
  ', please, with a short checklist',
  '; keep it brief',
  ' (asking for a friend)',
  ', naïve question maybe',
];

/** 198 distinct CAB-shaped rows with the published category counts, in category order. */
export function cabFixtureRows(): CabRow[] {
  const rows: CabRow[] = [];
  let i = 0;
  for (const [tags, n] of Object.entries(CAB_DATASET_SHAPE.categories)) {
    for (let k = 0; k < n; k++, i++) {
      const subject = SUBJECTS[i % SUBJECTS.length];
      const opener = OPENERS[(i * 7 + Math.floor(i / SUBJECTS.length)) % OPENERS.length];
      const angle = ANGLES[(i * 5 + Math.floor(i / 29)) % ANGLES.length];
      const extra = EXTRAS[(i * 3) % EXTRAS.length];
      const text = `${opener} ${subject} ${angle}${extra}`;
      rows.push({ query: text.charAt(0).toUpperCase() + text.slice(1), tags });
    }
  }
  return rows;
}

/** Write the fixture CSV into `dir` (file `dataset.csv`) and return its path. */
export function writeCabFixture(dir: string, rows: CabRow[] = cabFixtureRows()): string {
  const file = path.join(dir, 'dataset.csv');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(file, toCsv([['query', 'tags'], ...rows.map((r) => [r.query, r.tags])]));
  return file;
}

/** The published file when present, else the fixture written into `dir`. */
export function cabDatasetFile(dir: string): string {
  return HAS_REAL_CAB_DATASET ? REAL_CAB_DATASET : writeCabFixture(dir);
}

/** The rows (query, tags) of the published file when present, else of the fixture. */
export function cabDatasetRows(): CabRow[] {
  if (!HAS_REAL_CAB_DATASET) return cabFixtureRows();
  const [header, ...rows] = parseCsv(fs.readFileSync(REAL_CAB_DATASET, 'utf8'), REAL_CAB_DATASET);
  const [q, t] = [header.indexOf('query'), header.indexOf('tags')];
  return rows.map((r) => ({ query: r[q], tags: r[t] }));
}
