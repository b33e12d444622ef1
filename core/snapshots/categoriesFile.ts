import path from 'node:path';
import YAML from 'yaml';
import { readText } from '../io/dataFiles';
import { InputError } from '../model/inputError';

/** A categories file: a YAML/JSON list of names, or plain text with one name per line (# comments allowed). */
export function loadCategoriesFile(file: string): string[] {
  const text = readText(file, 'categories file');
  let list: unknown;
  const ext = path.extname(file).toLowerCase();
  if (['.yaml', '.yml', '.json'].includes(ext)) {
    try {
      list = YAML.parse(text);
    } catch (error) {
      throw new InputError(`${file}: not valid YAML/JSON: ${(error as Error).message}`);
    }
    if (
      list &&
      typeof list === 'object' &&
      !Array.isArray(list) &&
      Array.isArray((list as { categories?: unknown }).categories)
    )
      list = (list as { categories: unknown }).categories;
  } else {
    list = text
      .split(/\r?\n/)
      .map((l) => l.replace(/#.*$/, '').trim())
      .filter(Boolean);
  }
  if (!Array.isArray(list) || !list.every((c) => typeof c === 'string' && c.trim()))
    throw new InputError(`${file}: expected a list of category names (one per line, or a YAML/JSON list)`);
  const names = (list as string[]).map((c) => c.trim());
  const dup = names.find((c, i) => names.indexOf(c) !== i);
  if (dup) throw new InputError(`${file}: category "${dup}" is listed twice`);
  if (names.length < 2) throw new InputError(`${file}: need at least 2 categories, found ${names.length}`);
  return names;
}
