import path from 'node:path';
import { readText } from './dataFiles';
import { contentHash } from './hashing';
import { InputError } from './inputError';

/** `{{name}}` placeholders; an unknown placeholder is a rubric bug, so it fails loudly. */
export function renderTemplate(template: string, vars: Record<string, string>, where: string): string {
  return template.replace(/\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}/g, (_, name: string) => {
    if (!(name in vars)) throw new InputError(`${where}: unknown placeholder {{${name}}}; available: ${Object.keys(vars).join(', ')}`);
    return vars[name];
  });
}

/** A rendered prompt must show what the judge is there to grade; a template that drops it fails at load. */
export function requireShown(rendered: string, samples: Record<string, string>, where: string): void {
  for (const [placeholder, sample] of Object.entries(samples)) {
    if (!rendered.includes(sample)) throw new InputError(`${where}: the prompt must contain ${placeholder}`);
  }
}

/** A system + user prompt pair read from files, versioned by the hash of both texts (change a word, get a new version). */
export interface PromptPair {
  system: string;
  user: string;
  version: string;
}

export function loadPromptPair(dir: string, systemFile: string, userFile: string, what: string): PromptPair {
  const system = readText(path.join(dir, systemFile), what);
  const user = readText(path.join(dir, userFile), what);
  return { system, user, version: contentHash({ system, user }) };
}
