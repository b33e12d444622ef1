import readline from 'node:readline/promises';
import type { BrowserContext } from 'playwright-core';
import { writePrivateFile } from '../../core/io/privateFile';
import { chromiumPath } from '../../activities/adapters/chromiumPath';
import { ensureChromium } from '../chromium';
import { InputError } from '../../core/model/inputError';
import type { Command } from '../args';

/** Capture a logged-in session for the browser adapter: you log in by hand in a visible window, we save its storageState. */
export const browserLoginCommand: Command = {
  name: 'browser-login',
  summary: "open Chromium at a chat page, let you log in, save the session for a browser copilot's storageState",
  usage: 'judgeflow browser-login URL --out state.json   (needs a display; run it on your desktop)',
  options: { out: { type: 'string', short: 'o' } },
  async run({ values, positionals }) {
    const url = positionals[0];
    const out = values.out;
    if (!url || typeof out !== 'string') throw new InputError(`missing URL or --out\nUsage: ${this.usage}`);
    await ensureChromium();
    const { chromium } = require('playwright-core') as typeof import('playwright-core'); // loaded when a login runs, not at start-up
    const browser = await chromium.launch({ executablePath: chromiumPath(), headless: false });
    try {
      const context = await browser.newContext();
      await (await context.newPage()).goto(url);
      const rl = readline.createInterface({ input: process.stdin, output: process.stdout });
      await rl.question('Log in in the Chromium window, then press Enter here to save the session... ');
      rl.close();
      await saveStorageState(context, out);
      console.log(
        `Saved the session to ${out}. Point the copilot's storageState at it; treat the file like a password.`,
      );
      return 0;
    } finally {
      await browser.close();
    }
  },
};

/** The session (cookies, local storage) as a Playwright storageState file that only its owner can read. */
export async function saveStorageState(context: BrowserContext, out: string): Promise<void> {
  writePrivateFile(out, JSON.stringify(await context.storageState(), null, 2));
}
