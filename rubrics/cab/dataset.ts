import { CAB_CATEGORIES } from './curation';
import { parseCsv } from '../../core/io/csv';
import { InputError } from '../../core/model/inputError';
import { readText } from '../../core/io/dataFiles';
import { parseCabQueries, tagsOf } from './queries';

/** Where the published CryptoAnalystBench queries come from (judgeflow does not ship them). */
export const CAB_DATASET_SOURCE = {
  repository: 'https://github.com/sentient-agi/CryptoAnalystBench',
  file: 'data/dataset.csv',
};

/** The published file's shape: columns query,tags; 198 queries over the 11 categories with these counts. */
export const CAB_DATASET_SHAPE = {
  columns: ['query', 'tags'],
  rows: 198,
  categories: {
    'Project & Fundamental Research': 36,
    'Market Data & Price Discovery': 34,
    'On-Chain Analytics & Flows': 33,
    'Macro & Narrative Context': 23,
    'Trading & Strategy Design': 19,
    'Crypto Concepts & How-To': 16,
    'Comparative & Performance Analysis': 14,
    'Meme Coins': 10,
    'Security & Risks': 10,
    NFTs: 2,
    'Default / General Analysis': 1,
  } satisfies Record<(typeof CAB_CATEGORIES)[number], number>,
};

export interface CabDatasetCheck {
  file: string;
  ok: boolean;
  columns: string[];
  rows: number;
  categories: Record<string, number>;
  problems: string[];
}

/**
 * Compare a copy of the CryptoAnalystBench CSV with the published shape. A file that cannot be read as a query file
 * at all (malformed CSV, no query column, empty cells) throws an InputError naming the line.
 */
export function checkCabDataset(file: string): CabDatasetCheck {
  const [header = []] = parseCsv(readText(file, 'CryptoAnalystBench dataset'), file);
  const columns = header.map((h) => h.trim());
  const queries = parseCabQueries(file);
  const categories: Record<string, number> = {};
  for (const q of queries) for (const t of tagsOf(q)) categories[t] = (categories[t] ?? 0) + 1;
  const problems: string[] = [];
  const missing = CAB_DATASET_SHAPE.columns.filter((c) => !columns.includes(c));
  if (missing.length)
    problems.push(`missing column ${missing.map((c) => `"${c}"`).join(', ')} (header has: ${columns.join(', ')})`);
  if (queries.length !== CAB_DATASET_SHAPE.rows)
    problems.push(`${queries.length} queries; the published dataset has ${CAB_DATASET_SHAPE.rows}`);
  const expected: Record<string, number> = CAB_DATASET_SHAPE.categories;
  const untagged = queries.filter((q) => tagsOf(q).length === 0).length;
  if (untagged) problems.push(`${untagged} queries have no "tags" value`);
  for (const [name, n] of Object.entries(categories))
    if (!(name in expected))
      problems.push(`category "${name}" (${n} queries) is not one of the 11 CryptoAnalystBench categories`);
  for (const [name, n] of Object.entries(expected))
    if ((categories[name] ?? 0) !== n)
      problems.push(`category "${name}": ${categories[name] ?? 0} queries; the published dataset has ${n}`);
  return { file, ok: problems.length === 0, columns, rows: queries.length, categories, problems };
}

/** The check as a user-facing error: what differs and where to get the published file. */
export function assertCabDataset(file: string): CabDatasetCheck {
  const check = checkCabDataset(file);
  if (!check.ok)
    throw new InputError(
      `${file} does not have the shape of the published CryptoAnalystBench dataset:\n` +
        check.problems.map((p) => `  - ${p}`).join('\n') +
        `\nGet the file ${CAB_DATASET_SOURCE.file} from ${CAB_DATASET_SOURCE.repository} (columns query,tags; ${CAB_DATASET_SHAPE.rows} rows) and save it unchanged.`,
    );
  return check;
}
