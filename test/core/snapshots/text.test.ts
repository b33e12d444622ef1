import { seededRandom } from '../../../core/stats/random';
import { groupNearDuplicates, normalizeText, similarity, templateKey } from '../../../core/snapshots/text';

describe('normalizeText', () => {
  it('lowercases, strips punctuation and collapses whitespace', () => {
    expect(normalizeText("  What's   up, with POL?!  ")).toBe('whats up with pol');
    expect(normalizeText('BTC/ETH -- ratio\n\tnow')).toBe('btc eth ratio now');
    expect(normalizeText('...')).toBe('');
  });

  it('applies NFKC and keeps non-Latin letters', () => {
    expect(normalizeText('Ｈｅｌｌｏ，　ＷＯＲＬＤ！')).toBe('hello world');
    expect(normalizeText('ﬁnance')).toBe('finance');
    expect(normalizeText('Привет, Мир')).toBe('привет мир');
    expect(normalizeText('café')).toBe(normalizeText('cafe\u0301'));
  });
});

describe('similarity', () => {
  it('is 1 for texts equal after normalisation', () => {
    expect(similarity('What is the price of Bitcoin?', 'what is the price of bitcoin')).toBe(1);
  });

  it('uses word Jaccard: one extra word out of seven', () => {
    // 6 shared words / 7 in the union
    expect(similarity('what is the price of bitcoin', 'what is the price of bitcoin today')).toBeCloseTo(6 / 7, 12);
  });

  it('uses character shingles, so a typo stays similar', () => {
    // Word Jaccard is only 5/7 here; the 3-gram Jaccard carries it above 0.8.
    const s = similarity('how do I bridge to arbitrum', 'how do i brige to arbitrum');
    expect(s).toBeGreaterThan(0.8);
    expect(s).toBeLessThan(1);
  });

  it('is symmetric, 0 for unrelated texts, and within [0, 1]', () => {
    expect(similarity('abc def', 'ghi jkl')).toBe(0);
    expect(similarity('', 'anything')).toBe(0);
    expect(similarity('', '!!')).toBe(1);
    const a = 'Should I stake SOL?';
    const b = 'Is staking SOL worth it';
    expect(similarity(a, b)).toBe(similarity(b, a));
    expect(similarity(a, b)).toBeGreaterThan(0);
    expect(similarity(a, b)).toBeLessThan(0.8);
  });
});

describe('templateKey', () => {
  it('collapses ALLCAPS tickers', () => {
    expect(templateKey("What's up with POL")).toBe('whats up with <ticker>');
    expect(templateKey("What's up with BELDEX?")).toBe('whats up with <ticker>');
    expect(templateKey('Is 1INCH a good buy')).toBe('is <ticker> a good buy');
  });

  it('collapses $tickers, numbers, percentages, dates, addresses and URLs', () => {
    expect(templateKey('Will $pepe pump 20% by 2025-01-31?')).toBe('will <ticker> pump <pct> by <date>');
    expect(templateKey('Send $1,500 or 2.5k to 0xAbCdEf0123456789abcdef0123456789abcdef01')).toBe(
      'send <num> or <num> to <addr>',
    );
    expect(templateKey('What happened on March 3rd, 2024? see https://example.com/a?b=1')).toBe(
      'what happened on <date> see <url>',
    );
    expect(templateKey('balance of 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU')).toBe('balance of <addr>');
  });

  it('leaves ordinary words and common non-entity acronyms alone', () => {
    expect(templateKey('What is the APY on AAVE')).toBe('what is the apy on <ticker>');
    expect(templateKey('marketing tips for May')).toBe('marketing tips for may');
    // An all-caps sentence gives no signal about which words are tickers.
    expect(templateKey('WHAT IS HAPPENING')).toBe('what is happening');
  });
});

describe('groupNearDuplicates', () => {
  it('groups POL and BELDEX by template and keeps unrelated queries apart', () => {
    const texts = [
      "What's up with POL",
      'How do I set up a hardware wallet?',
      "What's up with BELDEX",
      'Explain impermanent loss',
      'what is the price of bitcoin',
      'What is the price of Bitcoin today?',
    ];
    expect(groupNearDuplicates(texts)).toEqual([[0, 2], [1], [3], [4, 5]]);
  });

  it('can turn template matching off', () => {
    expect(groupNearDuplicates(["What's up with POL", "What's up with BELDEX"], { byTemplate: false })).toEqual([
      [0],
      [1],
    ]);
  });

  it('respects the threshold', () => {
    const texts = ['what is the price of bitcoin', 'what is the price of bitcoin today'];
    expect(groupNearDuplicates(texts, { threshold: 0.85 })).toEqual([[0, 1]]); // 6/7 ≈ 0.857
    expect(groupNearDuplicates(texts, { threshold: 0.9 })).toEqual([[0], [1]]);
  });

  it('is transitive', () => {
    // a~b and b~c, but a and c are further apart.
    const texts = [
      'how to bridge usdc from ethereum to arbitrum one',
      'how to bridge usdc from ethereum to arbitrum',
      'how to bridge usdc from ethereum to arbitrum fast',
    ];
    expect(similarity(texts[0], texts[1])).toBeGreaterThanOrEqual(0.9);
    expect(similarity(texts[1], texts[2])).toBeGreaterThanOrEqual(0.9);
    expect(similarity(texts[0], texts[2])).toBeLessThan(0.9);
    expect(groupNearDuplicates(texts, { threshold: 0.9, byTemplate: false })).toEqual([[0, 1, 2]]);
  });

  it('handles empty input, exact duplicates and blank texts', () => {
    expect(groupNearDuplicates([])).toEqual([]);
    expect(groupNearDuplicates(['a b', '', 'A, b!', '  '])).toEqual([
      [0, 2],
      [1, 3],
    ]);
  });

  it('agrees with brute-force pairwise comparison', () => {
    const vocab =
      'price of btc eth sol what is the how do i stake bridge to arbitrum news today why down up wallet swap fees gas'.split(
        ' ',
      );
    const rand = seededRandom('brute');
    const texts = Array.from({ length: 250 }, () =>
      Array.from({ length: 2 + Math.floor(rand() * 6) }, () => vocab[Math.floor(rand() * vocab.length)]).join(' '),
    );
    for (const threshold of [0.5, 0.7, 0.8, 0.95]) {
      expect(groupNearDuplicates(texts, { threshold, byTemplate: false })).toEqual(bruteForce(texts, threshold));
    }
  });

  it('5,000 texts: the prefix-filter index computes similarity for only a small fraction of all pairs', () => {
    // How long this takes is a figure printed by `npm run bench`; here we check the work the index saves.
    const rand = seededRandom('perf');
    const words = Array.from({ length: 3000 }, (_, i) => `w${i.toString(36)}`);
    const texts = Array.from({ length: 5000 }, () =>
      Array.from({ length: 4 + Math.floor(rand() * 8) }, () => words[Math.floor(rand() * words.length)]).join(' '),
    );
    const stats = { comparisons: 0 };
    const groups = groupNearDuplicates(texts, { stats });
    expect(groups.flat().sort((x, y) => x - y)).toEqual(texts.map((_, i) => i));
    const allPairs = (texts.length * (texts.length - 1)) / 2;
    // Measured: 178,301 of 12,497,500 pairs (1.4%). Comparing every pair, as a missing index would, fails this.
    expect(stats.comparisons).toBeGreaterThan(0);
    expect(stats.comparisons).toBeLessThan(0.03 * allPairs);
  });
});

/** O(n^2) reference implementation of the similarity-only grouping. */
function bruteForce(texts: string[], threshold: number): number[][] {
  const parent = texts.map((_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i])));
  for (let i = 0; i < texts.length; i++) {
    for (let j = 0; j < i; j++) {
      if (similarity(texts[i], texts[j]) >= threshold) {
        const [ri, rj] = [find(i), find(j)];
        if (ri !== rj) parent[Math.max(ri, rj)] = Math.min(ri, rj);
      }
    }
  }
  const groups = new Map<number, number[]>();
  texts.forEach((_, i) => {
    const root = find(i);
    groups.set(root, [...(groups.get(root) ?? []), i]);
  });
  return [...groups.values()].sort((x, y) => x[0] - y[0]);
}
