import fs from 'node:fs';
import path from 'node:path';
import { InputError } from '../../core/model/inputError';
import { readFileUrl } from '../../core/io/files';
import { checkCabPrompts } from './prompts';
import { cabRubricFromContent, loadCabRubric, type CabPrompts, type CabRubric } from './rubric';

/**
 * `rubric: { from: cab-reference }`: a rubric version built at run time from the CryptoAnalystBench reference harness's
 * own prompt texts, so a user can judge with them verbatim while judgeflow ships none of them. `judgeflow dataset fetch
 * cab` downloads the files, at the commits pinned here, beside the dataset; the builder extracts the prompt strings from
 * the Python source and turns its f-string fields into judgeflow's placeholders. What the reference's texts leave out
 * stays judgeflow's: the dimension names reports use, the judge settings, and the ranking turn (judgeflow's blind
 * ranking, docs/protocols.md says why).
 */
export const CAB_REFERENCE_REPOSITORY = 'sentient-agi/CryptoAnalystBench';
/** Each file at the commit it was read at (the reference repository's history, as the project's tools report it). */
export const CAB_REFERENCE_FILES: Record<string, string> = {
  'script.py': '00a920abfdc9707cdde8f85fb6f6c4a26dc442ef',
  'run_error_taxonomy.py': '00a920abfdc9707cdde8f85fb6f6c4a26dc442ef',
  'citation_hallucination_check.py': '00a920abfdc9707cdde8f85fb6f6c4a26dc442ef',
  'src/prompts/citation_check.py': '228d9d60890fe7ac27c3a156cd7aebcff0b3ab47',
  'src/prompts/hallucination_check.py': '228d9d60890fe7ac27c3a156cd7aebcff0b3ab47',
};
export const CAB_REFERENCE_RAW_BASE = `https://raw.githubusercontent.com/${CAB_REFERENCE_REPOSITORY}`;
/** Where `dataset fetch cab` puts the reference files: beside the dataset, under reference/. */
export const cabReferenceDir = (datasetDir: string) => path.join(datasetDir, 'reference');
export const CAB_REFERENCE_DEFAULT_FILE = path.join('datasets', 'cryptoanalystbench', 'reference', 'script.py');

/**
 * Download every reference file into `dir` (JUDGEFLOW_CAB_REFERENCE_URL replaces the raw-file host, e.g. a mirror or a
 * test server: files are read from <base>/<commit>/<path>). Each file is written whole or not at all.
 */
export async function fetchCabReference(
  dir: string,
  env: NodeJS.ProcessEnv,
): Promise<Array<{ file: string; url: string; bytes: number }>> {
  const base = (env.JUDGEFLOW_CAB_REFERENCE_URL?.trim() || CAB_REFERENCE_RAW_BASE).replace(/\/+$/, '');
  const bodies: Array<{ file: string; url: string; body: Buffer }> = [];
  for (const [file, commit] of Object.entries(CAB_REFERENCE_FILES)) {
    const url = `${base}/${commit}/${file}`;
    if (url.startsWith('file:')) {
      bodies.push({ file, url, body: readFileUrl(url, 'JUDGEFLOW_CAB_REFERENCE_URL') });
      continue;
    }
    let res: Response;
    try {
      res = await fetch(url, { signal: AbortSignal.timeout(60_000) });
    } catch (error) {
      throw new InputError(
        `cannot download the CryptoAnalystBench reference file ${file} from ${url}: ${(error as Error).message}; check the network, or set JUDGEFLOW_CAB_REFERENCE_URL to a copy`,
      );
    }
    if (!res.ok)
      throw new InputError(
        `cannot download the CryptoAnalystBench reference file ${file}: ${url} answered HTTP ${res.status}; set JUDGEFLOW_CAB_REFERENCE_URL to where a copy is`,
      );
    bodies.push({ file, url, body: Buffer.from(await res.arrayBuffer()) });
  }
  // Checked before anything is written: a wrong download leaves the earlier copy in place.
  const script = bodies.find((b) => b.file === 'script.py')!;
  cabReferencePrompts(
    script.body.toString('utf8'),
    bodies.find((b) => b.file === 'run_error_taxonomy.py')!.body.toString('utf8'),
    script.url,
  );
  for (const { file, body } of bodies) {
    const out = path.join(dir, file);
    fs.mkdirSync(path.dirname(out), { recursive: true });
    const tmp = `${out}.${process.pid}.download`;
    fs.writeFileSync(tmp, body);
    fs.renameSync(tmp, out);
  }
  return bodies.map((b) => ({ file: path.join(dir, b.file), url: b.url, bytes: b.body.length }));
}

/** The body of the first triple-quoted (f-)string after `anchor` in Python source. */
export function pythonStringAfter(source: string, anchor: RegExp, where: string): string {
  const at = source.search(anchor);
  if (at < 0)
    throw new InputError(`${where}: no ${anchor.source} in the file; is it the reference's ${where.split('/').pop()}?`);
  const open = /f?"""/g;
  open.lastIndex = at;
  const start = open.exec(source);
  if (!start) throw new InputError(`${where}: no triple-quoted string after ${anchor.source}`);
  const end = source.indexOf('"""', start.index + start[0].length);
  if (end < 0) throw new InputError(`${where}: the string after ${anchor.source} is not closed`);
  return source.slice(start.index + start[0].length, end);
}

/** An f-string's fields as judgeflow placeholders (`{query}` → `{{query}}`), its escaped braces as plain ones. */
export function fStringToTemplate(text: string, fields: Record<string, string>, where: string): string {
  return text.replace(/\{\{|\}\}|\{([^{}]*)\}/g, (whole, name: string | undefined) => {
    if (whole === '{{') return '{';
    if (whole === '}}') return '}';
    const key = (name ?? '').trim();
    if (!(key in fields))
      throw new InputError(
        `${where}: the reference prompt has a field {${key}} judgeflow does not know how to fill (known: ${Object.keys(fields).join(', ')})`,
      );
    return `{{${fields[key]}}}`;
  });
}

/** The reference's scoring, system, context and taxonomy prompts as judgeflow templates. */
export function cabReferencePrompts(
  script: string,
  taxonomy: string,
  where: string,
): Pick<CabPrompts, 'system' | 'scoring' | 'taxonomySystem' | 'taxonomy'> & { context: string } {
  const date = { eval_datetime: 'evaluation_date', EVAL_DATETIME: 'evaluation_date' };
  const method = script.slice(Math.max(0, script.search(/def _create_scoring_prompt/)));
  const context = fStringToTemplate(
    pythonStringAfter(method, /context_block = f"""/, where),
    { trace_context: 'context' },
    `${where}: context block`,
  );
  const scoring = fStringToTemplate(
    pythonStringAfter(method, /return f"""/, where),
    { ...date, query: 'query', response: 'response', response_num: 'position', context_block: 'context' },
    `${where}: scoring prompt`,
  );
  const system = fStringToTemplate(
    pythonStringAfter(script, /system_prompt = f"""/, where),
    date,
    `${where}: system prompt`,
  );
  const taxonomyWhere = where.replace(/script\.py$/, 'run_error_taxonomy.py');
  const builder = taxonomy.slice(Math.max(0, taxonomy.search(/def build_prompt/)));
  const taxonomyUser = fStringToTemplate(
    pythonStringAfter(builder, /return f"""/, taxonomyWhere),
    { ...date, query: 'query', response: 'response', context_block: 'context' },
    `${taxonomyWhere}: taxonomy prompt`,
  );
  const systemLine = /ChatJudgeLLM\(llm,\s*"([^"]+)"\)/.exec(taxonomy);
  if (!systemLine)
    throw new InputError(`${taxonomyWhere}: no judge system prompt (ChatJudgeLLM(llm, "...")) in the file`);
  return { system, scoring, context, taxonomySystem: systemLine[1], taxonomy: taxonomyUser };
}

/**
 * The rubric `from: cab-reference` builds: the shipped rubric's data (dimension ids and names, judge settings, the
 * ranking turn) with the reference's prompt texts. `file` is the fetched script.py; run_error_taxonomy.py is read beside it.
 */
export function buildCabReferenceRubric(file: string): CabRubric {
  const script = path.resolve(file);
  const taxonomyFile = path.join(path.dirname(script), 'run_error_taxonomy.py');
  for (const f of [script, taxonomyFile])
    if (!fs.existsSync(f))
      throw new InputError(
        `${f}: not found; run judgeflow dataset fetch cab (it puts the reference's files under ${path.dirname(CAB_REFERENCE_DEFAULT_FILE)}), or point rubric.file at the fetched script.py`,
      );
  const texts = cabReferencePrompts(fs.readFileSync(script, 'utf8'), fs.readFileSync(taxonomyFile, 'utf8'), script);
  const shipped = loadCabRubric(__dirname);
  const { context, ...prompts } = texts;
  const content = {
    data: { ...shipped.data, name: 'CryptoAnalystBench (reference prompts)' },
    prompts: { ...shipped.prompts, ...prompts, contextBlock: context },
    reference: {
      repository: CAB_REFERENCE_REPOSITORY,
      files: {
        'script.py': CAB_REFERENCE_FILES['script.py'],
        'run_error_taxonomy.py': CAB_REFERENCE_FILES['run_error_taxonomy.py'],
      },
    },
  };
  return checkCabPrompts(cabRubricFromContent(content, path.dirname(script)));
}

/** The builder a protocol lists for `rubric: { from: cab-reference }` (see ProtocolModule.referenceRubrics). */
export const cabReferenceRubric = {
  describe: "CryptoAnalystBench's reference harness prompts (script.py, run_error_taxonomy.py)",
  defaultFile: CAB_REFERENCE_DEFAULT_FILE,
  build: buildCabReferenceRubric,
};
