import { spawn } from 'node:child_process';
import { CHROMIUM_INSTALL_COMMAND, chromiumPath, DEFAULT_CHROMIUM_PATH } from '../activities/adapters/chromiumPath';
import { isExecutableFile } from '../core/io/files';

/**
 * Return the Chromium executable, installing Debian's package when it is missing and we are root.
 * The only way a browser is ever obtained is apt-get, so no unreviewed binaries are fetched.
 */
export async function ensureChromium(log: (line: string) => void = console.log): Promise<string> {
  const path = chromiumPath();
  if (isExecutableFile(path)) return path;
  if (process.env.CHROMIUM_PATH && path !== DEFAULT_CHROMIUM_PATH)
    // Installing the package would not put a browser at a custom path, so do not pretend it would.
    throw new Error(
      `CHROMIUM_PATH is ${path}, which is not an executable file; fix or unset CHROMIUM_PATH (unset, ${DEFAULT_CHROMIUM_PATH} from Debian's chromium package is used)`,
    );
  if (process.getuid?.() !== 0)
    throw new Error(
      `Chromium is not installed at ${path}; the browser adapter needs it. Install it as root with: ${CHROMIUM_INSTALL_COMMAND}`,
    );
  log(`Chromium not found at ${path}; installing Debian's chromium package: ${CHROMIUM_INSTALL_COMMAND}`);
  await run('apt-get', ['update']);
  await run('apt-get', ['install', '-y', 'chromium']);
  if (!isExecutableFile(path))
    throw new Error(
      `apt-get installed chromium but ${path} is still missing; install it manually with: ${CHROMIUM_INSTALL_COMMAND}`,
    );
  return path;
}

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
    child.on('error', (error) =>
      reject(
        new Error(
          `could not run ${command} (${error.message}); install Chromium yourself with: ${CHROMIUM_INSTALL_COMMAND}`,
        ),
      ),
    );
    child.on('close', (code) =>
      code === 0
        ? resolve()
        : reject(
            new Error(
              `${command} ${args.join(' ')} failed with exit code ${code}: ${stderr.trim()}\nInstall Chromium with: ${CHROMIUM_INSTALL_COMMAND}`,
            ),
          ),
    );
  });
}
