import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Write a credential-bearing file (a browser session's cookies) readable by its owner only: 0600, and its directory
 * 0700 when this creates it. Written under a unique temporary name with that mode, then renamed into place, so the
 * secret is never on disk with wider permissions, not even for a moment.
 */
export function writePrivateFile(file: string, content: string): void {
  const dir = path.dirname(path.resolve(file));
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`);
  try {
    fs.writeFileSync(tmp, content, { mode: 0o600, flag: 'wx' });
    fs.chmodSync(tmp, 0o600); // the umask cannot widen it, but an odd filesystem default could
    fs.renameSync(tmp, file);
  } catch (error) {
    fs.rmSync(tmp, { force: true });
    throw error;
  }
}
