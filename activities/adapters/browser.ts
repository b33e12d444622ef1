import { existsSync } from 'node:fs';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { z } from 'zod';
import { chromiumPath, CHROMIUM_INSTALL_COMMAND } from './chromiumPath';
import { isExecutableFile } from '../../core/io/files';

/** playwright-core is loaded when a browser copilot first runs, not whenever a config is read. */
const playwright = () => require('playwright-core') as typeof import('playwright-core');
import { AdapterError, type AdapterContext, type AdapterModule } from './types';
import { copilotBaseShape } from './common';
import { toAdapterError } from './errors';
import type { AnswerSource } from '../../core/model/types';

const stepSchema = z.union([
  z.object({ click: z.string().min(1).describe('Click the element this selector matches.') }).strict(),
  z
    .object({
      fill: z.string().min(1).describe('Fill the input this selector matches with text.'),
      text: z.string().describe('The text a fill step types.'),
    })
    .strict(),
  z.object({ waitFor: z.string().min(1).describe('Wait until an element matches this selector.') }).strict(),
  z.object({ wait: z.number().int().min(0).max(120_000).describe('Wait this many milliseconds.') }).strict(),
]);

const doneSchema = z.union([
  z
    .object({
      quietMs: z
        .number()
        .int()
        .min(100)
        .describe("Finished when the answer's text is non-empty and unchanged for this many milliseconds."),
    })
    .strict(),
  z
    .object({
      selector: z
        .string()
        .min(1)
        .describe(
          'Finished when more elements match than before sending (e.g. a feedback bar added under each finished answer).',
        ),
    })
    .strict(),
  z
    .object({
      stopGone: z
        .string()
        .min(1)
        .describe('Finished when the answer has text and no element matching this stop button or spinner is visible.'),
    })
    .strict(),
]);

const configSchema = z
  .object({
    ...copilotBaseShape,
    type: z
      .literal('browser')
      .describe(
        'A chat web page driven in headless Chromium: a fresh browser context per query, one browser per worker.',
      ),
    url: z.string().url().describe('The chat page to open for every query.'),
    selectors: z
      .object({
        input: z.string().min(1).describe('The text box the question is typed into.'),
        send: z.string().min(1).optional().describe('The send button; absent: press Enter in the input.'),
        answer: z
          .string()
          .min(1)
          .describe('The answer container; the last match that was not on the page before sending is the new answer.'),
        stop: z
          .string()
          .min(1)
          .optional()
          .describe(
            'Stop button or spinner; while visible the answer is not finished (so a "Thinking…" placeholder never counts).',
          ),
        sources: z
          .string()
          .min(1)
          .optional()
          .describe(
            "Each entry of the page's source list for the new answer (a link, or an element holding one): read as the answer's sources for the grounding checks.",
          ),
      })
      .strict()
      .describe("CSS (or Playwright) selectors of the page's parts."),
    storageState: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Playwright storageState JSON of a logged-in session (judgeflow browser-login writes one), relative to the config file.',
      ),
    before: z
      .array(stepSchema)
      .default([])
      .describe("Steps before asking, e.g. [{ click: '#new-chat' }, { waitFor: 'textarea' }]."),
    done: doneSchema
      .default({ quietMs: 1500 })
      .describe('When an answer counts as finished: one of quietMs, selector or stopGone.'),
    selectorTimeoutMs: z
      .number()
      .int()
      .min(100)
      .default(10_000)
      .describe('How long a selector may take to appear before the page is declared broken; capped by timeoutMs.'),
  })
  .strict();

export type BrowserCopilotConfig = z.infer<typeof configSchema>;
type Step = z.infer<typeof stepSchema>;

/** A chat web page scraped through headless Chromium. */
export const browserAdapter: AdapterModule<BrowserCopilotConfig> = {
  type: 'browser',
  configSchema,
  // A chat page has no way to inject earlier turns; the query text is sent alone.
  supportsHistory: false,
  create(config, { saveArtefact }) {
    const who = `copilot ${config.name}`;
    return {
      async collect({ query, signal }) {
        if (config.storageState && !existsSync(config.storageState))
          throw new AdapterError(
            'config',
            `${who}: storageState file ${config.storageState} does not exist (save one with Playwright's context.storageState({ path }))`,
          );
        const progress: Progress = { stage: 'starting Chromium' };
        let context: BrowserContext | undefined;
        let page: Page | undefined;
        try {
          const browser = await untilAborted(sharedBrowser(), signal);
          context = await browser.newContext({ storageState: config.storageState });
          context.setDefaultTimeout(Math.min(config.selectorTimeoutMs, config.timeoutMs));
          context.setDefaultNavigationTimeout(config.timeoutMs);
          page = await context.newPage();
          return await untilAborted(ask(page, config, query.text, progress, signal), signal);
        } catch (error) {
          const failure = pageFailure(error, who, config, progress, page);
          const screenshot = page && saveArtefact && (await saveScreenshot(page, saveArtefact, config.name, query.id));
          if (!screenshot) throw failure;
          throw new AdapterError(failure.kind, `${failure.message} (screenshot: ${screenshot})`, {
            ...failure.options,
            screenshot,
          });
        } finally {
          await context?.close().catch(() => undefined);
        }
      },
    };
  },
};

// ---------- one shared browser per worker process ----------

let sharedLaunch: Promise<Browser> | undefined;

/** Launching Chromium costs ~1 s and ~100 MB, so all queries share one browser and get a fresh context each. */
function sharedBrowser(): Promise<Browser> {
  if (sharedLaunch) return sharedLaunch;
  const executablePath = chromiumPath();
  if (!isExecutableFile(executablePath))
    return Promise.reject(
      new AdapterError(
        'browser',
        `Chromium is not installed at ${executablePath}; install it with: ${CHROMIUM_INSTALL_COMMAND}`,
      ),
    );
  const launching = playwright()
    .chromium.launch({
      executablePath,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    })
    .then((browser) => {
      // A crashed browser is replaced on the next query instead of failing every query after it.
      browser.on('disconnected', () => {
        if (sharedLaunch === launching) sharedLaunch = undefined;
      });
      return browser;
    });
  launching.catch(() => {
    if (sharedLaunch === launching) sharedLaunch = undefined;
  });
  sharedLaunch = launching;
  return launching;
}

export async function closeSharedBrowser(): Promise<void> {
  const launching = sharedLaunch;
  sharedLaunch = undefined;
  const browser = await launching?.catch(() => undefined);
  await browser?.close();
}

// ---------- asking ----------

interface Progress {
  stage: string;
  /** Length of the new answer's text at the last poll, for timeout messages. */
  answerChars?: number;
}

const POLL_MS = 100;
/** Marks answers already on the page before sending, so the new answer is the last unmarked match. */
const SEEN = 'data-judgeflow-seen';

async function ask(page: Page, config: BrowserCopilotConfig, text: string, progress: Progress, signal: AbortSignal) {
  progress.stage = `opening ${config.url}`;
  await page.goto(config.url, { waitUntil: 'domcontentloaded' });
  const urlBefore = page.url();

  for (const [index, step] of config.before.entries()) {
    progress.stage = `running before[${index}]`;
    await runStep(page, step, `before[${index}]`);
  }

  progress.stage = 'typing the query';
  const input = await need(page, config.selectors.input, 'input');
  const answers = page.locator(config.selectors.answer);
  await answers.evaluateAll((elements, seen) => elements.forEach((element) => element.setAttribute(seen, '')), SEEN);
  // Sources already on the page belong to earlier answers.
  const sources = config.selectors.sources ? page.locator(config.selectors.sources) : undefined;
  await sources?.evaluateAll((elements, seen) => elements.forEach((element) => element.setAttribute(seen, '')), SEEN);
  const doneSelector = 'selector' in config.done ? page.locator(config.done.selector) : undefined;
  const doneBefore = doneSelector ? await doneSelector.count() : 0;
  await input.fill(text);
  if (config.selectors.send) await (await need(page, config.selectors.send, 'send')).click();
  else await input.press('Enter');

  progress.stage = `waiting for a new element matching answer selector "${config.selectors.answer}"`;
  const busySelectors = [config.selectors.stop, 'stopGone' in config.done ? config.done.stopGone : undefined].filter(
    (s): s is string => !!s,
  );
  let lastText: string | undefined;
  let stableSince = Date.now();
  while (!signal.aborted) {
    const answer = await newestAnswer(answers);
    const busy = await anyVisible(page, busySelectors);
    const now = Date.now();
    if (answer?.substance) {
      progress.stage = 'waiting for the answer to finish';
      progress.answerChars = answer.text.trim().length;
      if (answer.text !== lastText || busy) stableSince = now;
      lastText = answer.text;
      const finished =
        'quietMs' in config.done
          ? !busy && now - stableSince >= config.done.quietMs
          : doneSelector
            ? (await doneSelector.count()) > doneBefore
            : !busy;
      if (finished) {
        const final = (await newestAnswer(answers)) ?? answer; // read again: the last poll may be up to POLL_MS old
        const cited = sources ? await newSources(sources) : [];
        return {
          text: final.text.trim(),
          html: final.html,
          ...(cited.length ? { sources: cited } : {}),
          conversationId: page.url() !== urlBefore ? page.url() : undefined,
        };
      }
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  throw new Aborted();
}

/** Loading placeholders that chat pages put inside a fresh answer bubble before any real text arrives. */
const PLACEHOLDERS =
  '[role="progressbar"], [aria-busy="true"], [class*="spinner"], [class*="loading"], [class*="typing"], [class*="thinking" i]';

/**
 * The last answer match that was not on the page before sending. `substance` is its text without loading
 * placeholders, so a "Thinking…" spinner inside the bubble never counts as the answer (the `stop` selector covers other spinners).
 */
async function newestAnswer(answers: Locator): Promise<{ text: string; html: string; substance: string } | undefined> {
  return answers.evaluateAll(
    (elements, { seen, placeholders }) => {
      const last = elements[elements.length - 1] as HTMLElement | undefined;
      if (!last || last.hasAttribute(seen)) return undefined;
      let substance = last.innerText;
      for (const placeholder of Array.from(last.querySelectorAll<HTMLElement>(placeholders)))
        substance = substance.replace(placeholder.innerText, '');
      return { text: last.innerText, html: last.innerHTML, substance: substance.trim() };
    },
    { seen: SEEN, placeholders: PLACEHOLDERS },
  );
}

/** The source entries that appeared with the new answer, numbered from 1 as answers cite them: link, title. */
async function newSources(sources: Locator): Promise<AnswerSource[]> {
  return sources.evaluateAll(
    (elements, seen) =>
      elements
        .filter((element) => !element.hasAttribute(seen))
        .map((element, i) => {
          const link = (
            element.matches('a[href]') ? element : element.querySelector('a[href]')
          ) as HTMLAnchorElement | null;
          const title = ((link?.innerText || (element as HTMLElement).innerText) ?? '').trim();
          return { id: String(i + 1), ...(link ? { url: link.href } : {}), ...(title ? { title } : {}) };
        }),
    SEEN,
  );
}

async function anyVisible(page: Page, selectors: string[]): Promise<boolean> {
  for (const selector of selectors)
    if ((await page.locator(selector).filter({ visible: true }).count()) > 0) return true;
  return false;
}

async function runStep(page: Page, step: Step, where: string): Promise<void> {
  if ('click' in step) await (await need(page, step.click, `${where} click`)).click();
  else if ('fill' in step) await (await need(page, step.fill, `${where} fill`)).fill(step.text);
  else if ('waitFor' in step) await need(page, step.waitFor, `${where} waitFor`);
  else await page.waitForTimeout(step.wait);
}

/** Wait briefly for a visible match; a page without it is broken, so fail fast naming the selector instead of hanging until timeoutMs. */
async function need(page: Page, selector: string, what: string): Promise<Locator> {
  const locator = page.locator(selector).first();
  try {
    await locator.waitFor({ state: 'visible' });
    return locator;
  } catch (error) {
    if (!(error instanceof playwright().errors.TimeoutError)) throw error;
    const count = await page
      .locator(selector)
      .count()
      .catch(() => 0);
    const found = count ? `matched ${count} element(s), none visible,` : 'matched nothing';
    // Retryable: a page that loaded slowly or showed an interstitial often works on the next attempt.
    throw new AdapterError('selector', `${what} selector "${selector}" ${found} on ${page.url()}`, { retryable: true });
  }
}

// ---------- failures ----------

class Aborted extends Error {
  constructor() {
    super('aborted');
  }
}

/** Race work against the copilot's timeout; closing the context afterwards makes the abandoned work reject, which is expected. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  work.catch(() => undefined);
  if (signal.aborted) return Promise.reject(new Aborted());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Aborted());
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** The browser's view of a failure (what it was doing, on which page); classification itself is the shared one. */
function pageFailure(
  error: unknown,
  who: string,
  config: BrowserCopilotConfig,
  progress: Progress,
  page: Page | undefined,
): AdapterError {
  const onPage = page ? ` on ${page.url()}` : '';
  const where = ` while ${progress.stage}${onPage}`;
  // Aborted: the copilot's timeout (or a cancel, which askCopilot reports as such) stopped the page.
  if (error instanceof Aborted) {
    const seen = progress.answerChars === undefined ? '' : ` (answer had ${progress.answerChars} characters so far)`;
    return new AdapterError(
      'timeout',
      `${who} did not finish within ${config.timeoutMs} ms while ${progress.stage}${seen}${onPage}`,
      { retryable: true },
    );
  }
  // Playwright reports a crashed or closed page as plain Errors ("page.fill: Target page, context or browser has been closed").
  if (
    error instanceof Error &&
    /^\w+\.\w+: |Target (page, context or browser|closed)|browser has been closed/.test(error.message)
  )
    return new AdapterError('browser', `${who} failed${where}: ${error.message.split('\n')[0]}`, { retryable: true });
  return toAdapterError(error, who, { where });
}

/** Named by copilot, query and time, so every failed attempt keeps its own screenshot. */
async function saveScreenshot(
  page: Page,
  save: NonNullable<AdapterContext['saveArtefact']>,
  copilot: string,
  queryId: string,
): Promise<string | undefined> {
  const safe = (s: string) => s.replace(/[^A-Za-z0-9_.-]+/g, '_');
  const name = `${safe(copilot)}-${safe(queryId)}-${new Date().toISOString().replace(/[:.]/g, '-')}.png`;
  try {
    return await save({
      name,
      contentType: 'image/png',
      bytes: await page.screenshot({ fullPage: true, timeout: 10_000 }),
    });
  } catch {
    return undefined; // a failed screenshot must not hide the original failure
  }
}
