import fs from 'node:fs';
import path from 'node:path';

/** Write a file whole, then rename it into place, so a crash never leaves a half-written report or export. */
export async function writeFileAtomic(file: string, content: string | ((tmp: string) => Promise<void>)): Promise<void> {
  if (typeof content === 'string') return writeTextAtomic(file, content);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.tmp`);
  await content(tmp);
  fs.renameSync(tmp, file);
}

export function writeTextAtomic(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.tmp`);
  fs.writeFileSync(tmp, text);
  fs.renameSync(tmp, file);
}
