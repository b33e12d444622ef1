import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { InputError } from '../core/model/inputError';
import { latticeProtocol } from '../rubrics/lattice';
import {
  LATTICE_DATASET_DEFAULT_DIR,
  LATTICE_INSTRUCTIONS_FILE,
  latticeReferenceRubric,
} from '../rubrics/lattice/reference';
import type { LatticeRubric } from '../rubrics/lattice/rubric';

/**
 * `judgeflow dataset fetch lattice`: the reference repository's published files, at the commit the paper's data comes
 * from, downloaded, checked, and only then moved into place (a failed or wrong download leaves nothing, and an earlier
 * copy untouched). The project ships none of them.
 */
export const LATTICE_REPOSITORY = 'https://github.com/SaharaLabsAI/lattice-benchmark';
export const LATTICE_COMMIT = '29cf51ea4d105b315ae3852a63f2260852a1d5ab';
export const LATTICE_RAW_BASE = `https://raw.githubusercontent.com/SaharaLabsAI/lattice-benchmark/${LATTICE_COMMIT}`;
/** A base address (http(s):// or file://) holding the repository's paths; tests and mirrors set it. */
export const LATTICE_URL_ENV = 'JUDGEFLOW_LATTICE_DATASET_URL';
export const LATTICE_SETS = { '80': 80, '240': 240, '1200': 1200 } as const;
/** The six copilots whose answers the repository publishes (one file each, answers to all 1,200 queries). */
export const LATTICE_AGENTS = ['elsa', 'gina', 'june', 'minara', 'sorin', 'surf'] as const;
const MAX_FILE_BYTES = 50 * 1024 * 1024;

interface Wanted {
  /** Path in the repository. */
  source: string;
  /** Path under the target directory. */
  target: string;
  check(body: Buffer, where: string): string;
}

function parseJsonArray(body: Buffer, where: string): unknown[] {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch (error) {
    throw new InputError(`${where}: not JSON (${(error as Error).message})`);
  }
  if (!Array.isArray(value)) throw new InputError(`${where}: expected a JSON array`);
  return value;
}

function checkQueries(body: Buffer, where: string, expected: number, rubric: LatticeRubric): string {
  const rows = parseJsonArray(body, where) as Array<Record<string, unknown>>;
  if (rows.length !== expected)
    throw new InputError(`${where}: ${rows.length} queries, the published set has ${expected}`);
  const tasks = new Set(rubric.data.tasks.map((t) => `${t.id} ${t.name}`));
  const categories = new Set(rubric.data.categories.map((c) => `${c.id} ${c.name}`));
  rows.forEach((r, i) => {
    if (typeof r?.query !== 'string' || !tasks.has(String(r.task)) || !categories.has(String(r.category)))
      throw new InputError(
        `${where}: entry ${i} is not a published LATTICE query {id, query, task: "T1 Protocol Mechanism Interpretation", category: "C1 Basic"}`,
      );
  });
  return `${rows.length} queries`;
}

function checkAnswers(body: Buffer, where: string): string {
  const rows = parseJsonArray(body, where) as Array<Record<string, unknown>>;
  const bad = rows.findIndex(
    (r) => typeof r?.query !== 'string' || (typeof r.response !== 'string' && typeof r.final_answer !== 'string'),
  );
  if (bad >= 0) throw new InputError(`${where}: entry ${bad} is not {query, response} (or final_answer)`);
  return `${rows.length} answers`;
}

function checkInstructions(body: Buffer, where: string, tmp: string): string {
  fs.writeFileSync(tmp, body);
  try {
    latticeReferenceRubric(tmp);
  } catch (error) {
    throw error instanceof InputError ? new InputError(error.message.split(tmp).join(where)) : error;
  }
  return `${body.length} bytes`;
}

/** The files a fetch wants: the query set, the answer files asked for, the judge instructions and the licence. */
function wantedFiles(
  set: keyof typeof LATTICE_SETS,
  agents: readonly string[],
  rubric: LatticeRubric,
  scratch: string,
): Wanted[] {
  return [
    {
      source: `data/query/filtered_queries_${set}.json`,
      target: `filtered_queries_${set}.json`,
      check: (b, w) => checkQueries(b, w, LATTICE_SETS[set], rubric),
    },
    ...agents.map((a) => ({
      source: `data/response/output/1200_queries/filtered_response_${a}.json`,
      target: path.join('responses', `filtered_response_${a}.json`),
      check: checkAnswers,
    })),
    {
      source: `scoring/prompt/${LATTICE_INSTRUCTIONS_FILE}`,
      target: LATTICE_INSTRUCTIONS_FILE,
      check: (b, w) => checkInstructions(b, w, path.join(scratch, 'instructions.check.txt')),
    },
    {
      source: 'LICENSE',
      target: 'LICENSE',
      check: (b, w) => {
        if (!/MIT License/.test(b.toString('utf8'))) throw new InputError(`${w}: not the repository's MIT licence`);
        return 'MIT';
      },
    },
  ];
}

/** The body at `url`: http(s) with a timeout, or a file:// path read from disk. */
export async function download(url: string): Promise<Buffer> {
  if (url.startsWith('file:')) {
    const file = fileURLToPath(url);
    if (!fs.existsSync(file)) throw new InputError(`${file} does not exist`);
    return fs.readFileSync(file);
  }
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(120_000) });
  } catch (error) {
    const cause = (error as { cause?: Error }).cause;
    throw new InputError(`${(error as Error).message}${cause ? ` (${cause.message})` : ''}`);
  }
  if (!res.ok) throw new InputError(`HTTP ${res.status}`);
  const body = Buffer.from(await res.arrayBuffer());
  if (body.length > MAX_FILE_BYTES) throw new InputError(`${body.length} bytes, far more than any published file`);
  return body;
}

const byHand = (dir: string, wanted: Wanted[]) =>
  `Without a network, place the files by hand: from a clone of ${LATTICE_REPOSITORY} at commit ${LATTICE_COMMIT}, copy ${wanted.map((w) => `${w.source} to ${path.join(dir, w.target)}`).join(', ')}.`;

export interface LatticeFetchResult {
  dir: string;
  base: string;
  files: Array<{ file: string; url: string; bytes: number; content: string }>;
}

export function parseLatticeFetchOptions(values: Record<string, unknown>): {
  set: keyof typeof LATTICE_SETS;
  dir: string;
  agents: string[];
} {
  const set = String(values.set ?? '240');
  if (!(set in LATTICE_SETS))
    throw new InputError(`--set ${set}: the published sets are ${Object.keys(LATTICE_SETS).join(', ')}`);
  const answers = typeof values.answers === 'string' ? values.answers : 'all';
  const agents =
    answers === 'all'
      ? [...LATTICE_AGENTS]
      : answers === 'none'
        ? []
        : answers
            .split(',')
            .map((a) => a.trim().toLowerCase())
            .filter(Boolean);
  const unknown = agents.filter((a) => !(LATTICE_AGENTS as readonly string[]).includes(a));
  if (unknown.length)
    throw new InputError(
      `--answers: unknown copilot(s) ${unknown.join(', ')}; the repository publishes answers of ${LATTICE_AGENTS.join(', ')} (or give all or none)`,
    );
  return {
    set: set as keyof typeof LATTICE_SETS,
    dir: path.resolve(typeof values.dir === 'string' && values.dir ? values.dir : LATTICE_DATASET_DEFAULT_DIR),
    agents,
  };
}

export async function fetchLatticeDataset(
  opts: { set: keyof typeof LATTICE_SETS; dir: string; agents: string[] },
  env: NodeJS.ProcessEnv,
): Promise<LatticeFetchResult> {
  const base = (env[LATTICE_URL_ENV]?.trim() || LATTICE_RAW_BASE).replace(/\/+$/, '');
  if (!/^(?:https?|file):/.test(base))
    throw new InputError(`${LATTICE_URL_ENV}=${base}: expected an http(s):// or file:// address`);
  const rubric = latticeProtocol.loadRubric(latticeProtocol.defaultRubricDir) as LatticeRubric;
  // The downloads wait beside the target directory, which a failed fetch leaves as it was (or absent).
  fs.mkdirSync(path.dirname(opts.dir), { recursive: true });
  const scratch = fs.mkdtempSync(path.join(path.dirname(opts.dir), `.${path.basename(opts.dir)}.fetch-`));
  const wanted = wantedFiles(opts.set, opts.agents, rubric, scratch);
  try {
    const files: LatticeFetchResult['files'] = [];
    for (const w of wanted) {
      const url = `${base}/${w.source.split('/').map(encodeURIComponent).join('/')}`;
      let body: Buffer;
      try {
        body = await download(url);
      } catch (error) {
        throw new InputError(
          `cannot download ${w.source} of the LATTICE reference repository from ${url}: ${(error as Error).message}. ${byHand(opts.dir, wanted)} Or set ${LATTICE_URL_ENV} to a copy (http(s):// or file://).`,
        );
      }
      const content = w.check(body, url);
      const tmp = path.join(scratch, w.target);
      fs.mkdirSync(path.dirname(tmp), { recursive: true });
      fs.writeFileSync(tmp, body);
      files.push({ file: path.join(opts.dir, w.target), url, bytes: body.length, content });
    }
    // Every file downloaded and checked: only now does anything replace what the directory held.
    for (const w of wanted) {
      fs.mkdirSync(path.dirname(path.join(opts.dir, w.target)), { recursive: true });
      fs.renameSync(path.join(scratch, w.target), path.join(opts.dir, w.target));
    }
    return { dir: opts.dir, base, files };
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}
