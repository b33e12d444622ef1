import type { SimHandler } from '../../sim/server';

/** A copilot answer that tries every way Markdown-in-HTML can run script or reach the network. */
export const EVIL_ANSWER = [
  '## Verdict on ETH',
  'Plain **bold** and a [safe link](https://example.org/eth).',
  '<script>alert(1)</script>',
  '<img src=x onerror=alert(1)>',
  '[click me](javascript:alert(1)) and ![chart](http://198.51.100.7/chart.png)',
  '- first point',
  '- second point',
].join('\n');

/** Sim handler: the model `sim-evil` answers EVIL_ANSWER; everything else gets the simulator's default. */
export const evilCopilot: SimHandler = (body) => (body.model === 'sim-evil' ? EVIL_ANSWER : undefined);

/** The drill-down's answer panel (or any container) must hold the text but nothing executable or remote. */
export async function expectInert(page: import('playwright-core').Page, selector: string): Promise<void> {
  const found = await page.$eval(selector, (root) => ({
    scripts: root.querySelectorAll('script').length,
    images: root.querySelectorAll('img').length,
    handlers: Array.from(root.querySelectorAll('*')).filter((e) =>
      Array.from(e.attributes).some((a) => a.name.startsWith('on')),
    ).length,
    jsLinks: Array.from(root.querySelectorAll('a')).filter((a) => /^\s*javascript:/i.test(a.getAttribute('href') ?? ''))
      .length,
    links: Array.from(root.querySelectorAll('a')).map((a) => a.getAttribute('href')),
    text: root.textContent ?? '',
  }));
  expect(found).toMatchObject({ scripts: 0, images: 0, handlers: 0, jsLinks: 0 });
  expect(found.links).toContain('https://example.org/eth');
  // The raw HTML is shown as text, not interpreted.
  expect(found.text).toContain('<script>alert(1)</script>');
  expect(found.text).toContain('<img src=x onerror=alert(1)>');
}
