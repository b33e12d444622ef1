import fs from 'node:fs';
import path from 'node:path';
import { REPO, tempDir } from './harness';

/** A copy of rubrics/<protocol>'s data files (YAML and prompts), to edit in a test. */
export function copyRubric(protocol = 'lattice'): string {
  const from = path.join(REPO, 'rubrics', protocol);
  const dir = tempDir(`jf-rubric-${protocol}-`);
  for (const f of fs.readdirSync(from))
    if (/\.(ya?ml|md|txt|json)$/.test(f)) fs.copyFileSync(path.join(from, f), path.join(dir, f));
  return dir;
}

/** Replace exactly one occurrence of `from` in `file` (fails loudly if the rubric text moved on). */
export function editOnce(file: string, from: string, to: string): void {
  const text = fs.readFileSync(file, 'utf8');
  if (text.split(from).length !== 2) throw new Error(`${file}: expected exactly one "${from}"`);
  fs.writeFileSync(file, text.replace(from, to));
}

export const D2_OLD = 'Whether the response explains the mechanisms and cause-and-effect chains that matter';
export const D2_NEW =
  'Whether the response explains, step by step, the mechanisms and cause-and-effect chains that matter';
