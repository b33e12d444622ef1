import { chromium, type Browser, type Page } from 'playwright-core';
import { chromiumPath } from '../../activities/adapters/chromiumPath';

/** Headless Debian Chromium, as the browser adapter launches it. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** What a page did that a safe, offline report must not: console errors, dialogs (alert), requests other than the allowed ones. */
export interface PageWatch {
  consoleErrors: string[];
  dialogs: string[];
  requests: string[];
}

/**
 * A page whose every request is routed here: requests to `allowed(url)` go through, anything else is recorded and aborted.
 * Dialogs (an injected alert) are recorded and dismissed.
 */
export async function watchedPage(
  browser: Browser,
  allowed: (url: string) => boolean,
  viewport = { width: 1200, height: 900 },
): Promise<{ page: Page; seen: PageWatch }> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const seen: PageWatch = { consoleErrors: [], dialogs: [], requests: [] };
  page.on('console', (m) => {
    if (m.type() === 'error') seen.consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => seen.consoleErrors.push(String(e)));
  page.on('dialog', (d) => {
    seen.dialogs.push(d.message());
    void d.dismiss();
  });
  await context.route('**/*', (route) => {
    const url = route.request().url();
    seen.requests.push(url);
    return allowed(url) ? route.continue() : route.abort();
  });
  return { page, seen };
}
