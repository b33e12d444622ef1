import { assertCabDataset, CAB_DATASET_SHAPE, CAB_DATASET_SOURCE } from '../../rubrics/cab/dataset';
import { cabReferenceDir, fetchCabReference } from '../../rubrics/cab/reference';
import fs from 'node:fs';
import path from 'node:path';
import { InputError } from '../../core/model/inputError';
import { readFileUrl } from '../../core/io/files';
import type { Command } from '../args';
import { fetchLatticeDataset, LATTICE_COMMIT, LATTICE_URL_ENV, parseLatticeFetchOptions } from '../latticeDataset';

const usage = `judgeflow dataset check FILE [--json]   (a copy of the CryptoAnalystBench dataset.csv)\n       judgeflow dataset fetch cab [--out FILE] [--no-reference]   (download it from the reference repository, then check it; JUDGEFLOW_DATASET_URL overrides the address, file:///path reads a local copy; the reference prompt files come beside it, JUDGEFLOW_CAB_REFERENCE_URL overrides their host, --no-reference skips them)\n       judgeflow dataset fetch lattice [--set 80|240|1200] [--answers all|none|elsa,gina,...] [--dir D]   (the LATTICE queries, answers, judge instructions and licence; ${LATTICE_URL_ENV} overrides the address)`;

/** Where `dataset fetch cab` writes by default (relative to the working directory); examples/cab-demo.yaml reads it. */
export const CAB_DATASET_DEFAULT_OUT = path.join('datasets', 'cryptoanalystbench', 'dataset.csv');
/** The published CSV, raw, on the repository's default branch. */
export const CAB_DATASET_URL = `${CAB_DATASET_SOURCE.repository.replace('https://github.com/', 'https://raw.githubusercontent.com/')}/HEAD/${CAB_DATASET_SOURCE.file}`;
const MAX_DATASET_BYTES = 20 * 1024 * 1024;

/**
 * Download the dataset to a temporary file beside `out`, check its shape, and only then rename it into place: a failed
 * or wrong download leaves nothing (and an earlier copy untouched).
 */
async function fetchCabDataset(out: string, env: NodeJS.ProcessEnv): Promise<{ url: string; bytes: number }> {
  const url = env.JUDGEFLOW_DATASET_URL?.trim() || CAB_DATASET_URL;
  if (url.startsWith('file:'))
    return { url, bytes: placeCabDataset(out, url, readFileUrl(url, 'JUDGEFLOW_DATASET_URL')) };
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(60_000) });
  } catch (error) {
    throw new InputError(
      `cannot download the CryptoAnalystBench dataset from ${url}: ${(error as Error).message}${(error as { cause?: Error }).cause ? ` (${(error as { cause?: Error }).cause!.message})` : ''}; check the network, or set JUDGEFLOW_DATASET_URL to a copy`,
    );
  }
  if (!res.ok)
    throw new InputError(
      `cannot download the CryptoAnalystBench dataset: ${url} answered HTTP ${res.status}; set JUDGEFLOW_DATASET_URL to where a copy is`,
    );
  return { url, bytes: placeCabDataset(out, url, Buffer.from(await res.arrayBuffer())) };
}

/** Check the downloaded bytes and put them at `out`; the number of bytes written. */
function placeCabDataset(out: string, url: string, body: Buffer): number {
  if (body.length > MAX_DATASET_BYTES)
    throw new InputError(`${url} sent ${body.length} bytes, far more than the dataset (about 50 KB); not the dataset`);
  // The temporary copy keeps a .csv name: the check reads the file by its extension.
  fs.mkdirSync(path.dirname(out), { recursive: true });
  const tmp = path.join(path.dirname(out), `.${path.basename(out, '.csv')}.${process.pid}.download.csv`);
  try {
    fs.writeFileSync(tmp, body);
    try {
      assertCabDataset(tmp); // a download of the wrong file is refused before it is in place
    } catch (error) {
      throw error instanceof InputError ? new InputError(error.message.split(tmp).join(url)) : error;
    }
    fs.renameSync(tmp, out);
  } finally {
    fs.rmSync(tmp, { force: true });
  }
  return body.length;
}

export const datasetCommand: Command = {
  name: 'dataset',
  summary:
    'fetch the CryptoAnalystBench dataset, or check that a copy has the published shape (columns, rows, categories)',
  usage,
  options: {
    json: { type: 'boolean' },
    'no-reference': { type: 'boolean' },
    out: { type: 'string' },
    set: { type: 'string' },
    answers: { type: 'string' },
    dir: { type: 'string' },
  },
  async run({ values, positionals }) {
    const [action, file, ...extra] = positionals;
    if (action === 'fetch' && file === 'lattice' && !extra.length) {
      const result = await fetchLatticeDataset(parseLatticeFetchOptions(values), process.env);
      if (values.json) console.log(JSON.stringify(result));
      else {
        console.log(
          `Downloaded the LATTICE reference files (commit ${LATTICE_COMMIT.slice(0, 12)}, MIT licence in ${result.dir}/LICENSE) from ${result.base} to ${result.dir}:`,
        );
        for (const f of result.files) console.log(`  ${path.relative(result.dir, f.file)}  ${f.content}`);
        console.log('See docs/protocols.md ("A LATTICE run on the published queries") for a config that reads them.');
      }
      return 0;
    }
    if (action === 'fetch') {
      if (file !== 'cab' || extra.length)
        throw new InputError(
          `dataset fetch takes the dataset's name: cab (CryptoAnalystBench) or lattice\nUsage: ${usage}`,
        );
      const out = path.resolve(typeof values.out === 'string' && values.out ? values.out : CAB_DATASET_DEFAULT_OUT);
      const { url, bytes } = await fetchCabDataset(out, process.env);
      const check = assertCabDataset(out);
      // The reference harness's prompt files beside it, for rubric: { from: cab-reference } only.
      const reference = values['no-reference']
        ? []
        : await fetchCabReference(cabReferenceDir(path.dirname(out)), process.env).catch((error: Error) => {
            throw new InputError(
              `${error.message}.\nThe dataset itself is in place (${out}, ${check.rows} queries); the reference prompt files are needed only for rubric: { from: cab-reference }: pass --no-reference to do without them.`,
            );
          });
      if (values.json) console.log(JSON.stringify({ ...check, file: out, url, bytes, reference }));
      else
        console.log(
          `Downloaded ${url} to ${out} (${bytes} bytes): ${check.rows} queries, ${Object.keys(CAB_DATASET_SHAPE.categories).length} categories as published. Use it as queries: in a cab config (examples/cab-demo.yaml reads ${CAB_DATASET_DEFAULT_OUT}).\n` +
            (values['no-reference']
              ? 'The reference prompt files were not fetched (--no-reference).'
              : `The reference harness's prompt files (pinned commits) are in ${cabReferenceDir(path.dirname(out))}: rubric: { from: cab-reference } judges with them verbatim.`),
        );
      return 0;
    }
    if (action !== 'check')
      throw new InputError(`unknown action "${action ?? ''}"; expected check or fetch\nUsage: ${usage}`);
    if (!file || extra.length) throw new InputError(`dataset check takes exactly one FILE\nUsage: ${usage}`);
    const check = assertCabDataset(file);
    if (values.json) console.log(JSON.stringify(check));
    else
      console.log(
        `${file}: the CryptoAnalystBench dataset (${CAB_DATASET_SOURCE.repository}, ${CAB_DATASET_SOURCE.file}): ` +
          `columns ${check.columns.join(',')}, ${check.rows} queries, ${Object.keys(CAB_DATASET_SHAPE.categories).length} categories as published.`,
      );
    return 0;
  },
};
