/** Debian's Chromium; the browser adapter never uses a browser downloaded by Playwright. */
export const DEFAULT_CHROMIUM_PATH = '/usr/bin/chromium';
export const CHROMIUM_INSTALL_COMMAND = 'apt-get update && apt-get install -y chromium';

export function chromiumPath(env: NodeJS.ProcessEnv = process.env): string {
  return env.CHROMIUM_PATH || DEFAULT_CHROMIUM_PATH;
}
