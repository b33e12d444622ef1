/**
 * Near-duplicate detection for short user queries. Pure JavaScript, no dependencies, deterministic.
 *
 * Two notions of "the same query" are combined:
 *  - surface similarity: Jaccard over word tokens or over character 3-grams, so reworded or
 *    typo'd copies are caught;
 *  - template identity: queries that differ only in the entity they ask about ("What's up with POL"
 *    vs "What's up with BELDEX") share a templateKey.
 */

// ---------------------------------------------------------------------------------------------
// Normalisation and similarity
// ---------------------------------------------------------------------------------------------

/** Apostrophes are removed rather than turned into spaces so "what's" stays one token ("whats"). */
const APOSTROPHES = /['\u2018\u2019\u02bc`]/g;
/** Anything that is not a letter, a combining mark or a digit counts as punctuation. */
const NON_WORD = /[^\p{L}\p{M}\p{N}]+/gu;

/** Lowercase, NFKC, strip punctuation, collapse whitespace. */
export function normalizeText(s: string): string {
  return s.normalize('NFKC').toLowerCase().replace(APOSTROPHES, '').replace(NON_WORD, ' ').trim();
}

function wordSet(normalized: string): Set<string> {
  return new Set(normalized === '' ? [] : normalized.split(' '));
}

/** Character 3-gram shingles; a text shorter than 3 characters is its own single shingle. */
function shingleSet(normalized: string): Set<string> {
  const out = new Set<string>();
  if (normalized.length === 0) return out;
  if (normalized.length < 3) {
    out.add(normalized);
    return out;
  }
  for (let i = 0; i + 3 <= normalized.length; i++) out.add(normalized.slice(i, i + 3));
  return out;
}

function jaccard(x: Set<string>, y: Set<string>): number {
  if (x.size === 0 && y.size === 0) return 1;
  const [small, large] = x.size <= y.size ? [x, y] : [y, x];
  let inter = 0;
  for (const t of small) if (large.has(t)) inter++;
  return inter / (x.size + y.size - inter);
}

interface Profile {
  words: Set<string>;
  shingles: Set<string>;
}

function profile(normalized: string): Profile {
  return { words: wordSet(normalized), shingles: shingleSet(normalized) };
}

function profileSimilarity(p: Profile, q: Profile): number {
  return Math.max(jaccard(p.words, q.words), jaccard(p.shingles, q.shingles));
}

/**
 * Similarity in [0, 1] of two texts after normalisation: the larger of word-token Jaccard (robust to
 * reordering) and character-3-gram Jaccard (robust to typos and inflection).
 */
export function similarity(a: string, b: string): number {
  const na = normalizeText(a);
  const nb = normalizeText(b);
  if (na === nb) return 1;
  return profileSimilarity(profile(na), profile(nb));
}

// ---------------------------------------------------------------------------------------------
// Template keys
// ---------------------------------------------------------------------------------------------

/**
 * Upper-case words that are vocabulary rather than an entity slot. Without this list "what is the
 * APY on X" and "what is the TVL on X" would look like the same template.
 */
const NON_ENTITY_ACRONYMS = new Set([
  'AI',
  'API',
  'APR',
  'APY',
  'ATH',
  'ATL',
  'CEX',
  'DAO',
  'DCA',
  'DEX',
  'DYOR',
  'ETF',
  'FAQ',
  'FOMO',
  'FUD',
  'KYC',
  'NFT',
  'NFTS',
  'OK',
  'PNL',
  'ROI',
  'TA',
  'TLDR',
  'TVL',
  'UK',
  'US',
  'USA',
  'EU',
]);

const MONTH =
  '(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\\b\\.?';

/**
 * Entity patterns in the order they are applied. Order matters: URLs and addresses go first so their
 * digits are not taken for numbers, dates before plain numbers, percentages before numbers.
 */
const SLOTS: Array<{ name: string; pattern: RegExp }> = [
  { name: 'url', pattern: /\b(?:https?:\/\/|www\.)\S+/gi },
  { name: 'addr', pattern: /\b0x[0-9a-f]{6,}\b/gi },
  // Base58 strings of wallet/mint length (Solana, Bitcoin legacy): long enough not to hit words.
  { name: 'addr', pattern: /\b(?=[1-9A-HJ-NP-Za-km-z]*\d)[1-9A-HJ-NP-Za-km-z]{26,44}\b/g },
  { name: 'date', pattern: /\b\d{4}[-/.]\d{1,2}[-/.]\d{1,2}\b/g },
  { name: 'date', pattern: /\b\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}\b/g },
  { name: 'date', pattern: new RegExp(`\\b${MONTH}\\s+\\d{1,2}(?:st|nd|rd|th)?(?:,?\\s+\\d{4})?\\b`, 'gi') },
  { name: 'date', pattern: new RegExp(`\\b\\d{1,2}(?:st|nd|rd|th)?\\s+${MONTH}(?:,?\\s+\\d{4})?(?![a-z])`, 'gi') },
  { name: 'pct', pattern: /[+-]?\d[\d,]*(?:\.\d+)?\s?%/g },
  { name: 'ticker', pattern: /\$[A-Za-z][A-Za-z0-9]{0,9}\b/g },
  { name: 'num', pattern: /[$€£]?[+-]?\b\d[\d,]*(?:\.\d+)?(?:[kmb]|bn)?\b/gi },
];

/** ALLCAPS token of 2-10 letters/digits containing at least one letter (BTC, POL, 1INCH, L2). */
const CAPS_TOKEN = /(?<![\p{L}\p{N}])(?=[A-Z0-9]*[A-Z])[A-Z0-9]{2,10}(?![\p{L}\p{N}])/gu;

/**
 * Placeholders are wrapped in private-use characters while the raw text is rewritten so that later
 * patterns cannot match inside them and normalisation can tell them apart from ordinary words.
 */
const OPEN = '\uE000';
const CLOSE = '\uE001';
const PLACEHOLDER = /\uE000([a-z]+)\uE001/g;

function slot(name: string): string {
  return ` ${OPEN}${name}${CLOSE} `;
}

/**
 * Collapses entity slots (tickers, $TICKERS, numbers, percentages, dates, addresses, URLs) into
 * placeholders such as "<ticker>", then normalises the rest, so queries that differ only in the
 * entity share a key.
 */
export function templateKey(s: string): string {
  const original = s.normalize('NFKC').replace(/[\uE000\uE001]/g, '');
  let text = original;
  for (const { name, pattern } of SLOTS) text = text.replace(pattern, slot(name));
  // In all-caps text (shouting) capitalisation says nothing about which words are tickers.
  if (/\p{Ll}/u.test(original)) {
    text = text.replace(CAPS_TOKEN, (tok) => (NON_ENTITY_ACRONYMS.has(tok) ? tok : slot('ticker')));
  }
  return text
    .split(PLACEHOLDER)
    .map((part, i) => (i % 2 === 1 ? `<${part}>` : normalizeText(part)))
    .filter((part) => part !== '')
    .join(' ');
}

// ---------------------------------------------------------------------------------------------
// Grouping
// ---------------------------------------------------------------------------------------------

class UnionFind {
  private readonly parent: number[];

  constructor(n: number) {
    this.parent = Array.from({ length: n }, (_, i) => i);
  }

  find(i: number): number {
    let root = i;
    while (this.parent[root] !== root) root = this.parent[root];
    while (this.parent[i] !== root) [this.parent[i], i] = [root, this.parent[i]]; // path compression
    return root;
  }

  union(i: number, j: number): void {
    const ri = this.find(i);
    const rj = this.find(j);
    // Attach to the smaller root so a root is always its set's first index (handy when debugging).
    if (ri !== rj) ri < rj ? (this.parent[rj] = ri) : (this.parent[ri] = rj);
  }
}

/** Length of the prefix-filtering prefix: how many of a set's rarest tokens must be indexed. */
function prefixLength(size: number, threshold: number): number {
  // The small epsilon keeps e.g. 0.7 * 10 = 7.000000000000001 from rounding up to 8 and
  // shortening the prefix, which would silently drop true matches.
  return size - Math.ceil(threshold * size - 1e-9) + 1;
}

/**
 * Calls `onCandidate(i, j)` (j < i) for every pair of sets whose Jaccard could reach `threshold`.
 *
 * Prefix filtering (Chaudhuri et al. 2006): sort every set by global token rarity; if
 * J(x, y) >= t then the first |x| - ceil(t|x|) + 1 tokens of x and the corresponding prefix of y
 * share a token. It is exact (no true pair is missed) and, because prefixes consist of rare
 * tokens, the candidate lists stay short instead of growing as n^2.
 */
function prefixFilterCandidates(
  sets: Array<Set<string>>,
  threshold: number,
  onCandidate: (i: number, j: number) => void,
): void {
  const frequency = new Map<string, number>();
  for (const set of sets) for (const t of set) frequency.set(t, (frequency.get(t) ?? 0) + 1);
  const byRarity = (x: string, y: string): number =>
    frequency.get(x)! - frequency.get(y)! || (x < y ? -1 : x > y ? 1 : 0);

  const index = new Map<string, number[]>();
  sets.forEach((set, i) => {
    if (set.size === 0) return; // empty sets only match each other; handled as exact duplicates
    const prefix = [...set].sort(byRarity).slice(0, prefixLength(set.size, threshold));
    const seen = new Set<number>();
    for (const token of prefix) {
      const postings = index.get(token);
      if (postings) {
        for (const j of postings) {
          if (!seen.has(j)) {
            seen.add(j);
            onCandidate(i, j);
          }
        }
        postings.push(i);
      } else index.set(token, [i]);
    }
  });
}

/** Work counters a caller may pass in to see how much comparing the index saved (tests, `judgeflow bench`). */
export interface GroupingStats {
  /** Pairs of distinct texts whose similarity was actually computed. */
  comparisons: number;
}

/**
 * Groups near-duplicate texts. Returns every index exactly once: groups (singletons included) with
 * indices ascending, ordered by their first index. Two texts are linked when similarity >= threshold
 * or, with byTemplate, when their templateKeys are equal; groups are the transitive closure.
 */
export function groupNearDuplicates(
  texts: string[],
  opts: { threshold?: number; byTemplate?: boolean; stats?: GroupingStats } = {},
): number[][] {
  const threshold = opts.threshold ?? 0.8;
  const byTemplate = opts.byTemplate ?? true;
  const uf = new UnionFind(texts.length);

  // Identical normalised texts have similarity 1, so link them up front and compare only one
  // representative per distinct text below.
  const firstByNormalized = new Map<string, number>();
  const representatives: number[] = [];
  const normalized = texts.map(normalizeText);
  normalized.forEach((norm, i) => {
    const first = firstByNormalized.get(norm);
    if (first === undefined) {
      firstByNormalized.set(norm, i);
      representatives.push(i);
    } else uf.union(first, i);
  });

  if (byTemplate) {
    const firstByKey = new Map<string, number>();
    texts.forEach((text, i) => {
      const key = templateKey(text);
      const first = firstByKey.get(key);
      if (first === undefined) firstByKey.set(key, i);
      else uf.union(first, i);
    });
  }

  linkSimilar(
    representatives.map((i) => normalized[i]),
    threshold,
    opts.stats,
    // Pairs already connected (by template or transitively) cannot change the grouping: skip them.
    (x, y) => uf.find(representatives[x]) === uf.find(representatives[y]),
    (x, y) => uf.union(representatives[x], representatives[y]),
  );

  return collectGroups(uf, texts.length);
}

/** Links every pair of distinct normalised texts whose similarity reaches the threshold. */
function linkSimilar(
  distinct: string[],
  threshold: number,
  stats: GroupingStats | undefined,
  connected: (x: number, y: number) => boolean,
  link: (x: number, y: number) => void,
): void {
  if (distinct.length < 2) return;
  if (threshold <= 0) {
    // Every pair qualifies, including pairs with nothing in common, so no index can help.
    for (let i = 1; i < distinct.length; i++) link(0, i);
    return;
  }
  if (threshold > 1) return; // similarity never exceeds 1

  const profiles = distinct.map(profile);
  const check = (i: number, j: number): void => {
    if (connected(i, j)) return;
    if (stats) stats.comparisons++;
    if (profileSimilarity(profiles[i], profiles[j]) >= threshold) link(i, j);
  };
  // similarity = max of the two Jaccards, so a pair qualifies iff either Jaccard does: the union
  // of the candidates from both indexes covers every qualifying pair.
  prefixFilterCandidates(
    profiles.map((p) => p.words),
    threshold,
    check,
  );
  prefixFilterCandidates(
    profiles.map((p) => p.shingles),
    threshold,
    check,
  );
}

function collectGroups(uf: UnionFind, n: number): number[][] {
  const byRoot = new Map<number, number[]>();
  const groups: number[][] = [];
  for (let i = 0; i < n; i++) {
    const root = uf.find(i);
    let group = byRoot.get(root);
    if (!group) {
      group = [];
      byRoot.set(root, group);
      groups.push(group); // first seen at its smallest index, so groups come out in order
    }
    group.push(i);
  }
  return groups;
}

/** Longest answer a judge is sent, and shown per row in report.html, unless the run says otherwise (`maxAnswerChars`). */
export const DEFAULT_MAX_ANSWER_CHARS = 200_000;

/** Characters as a reader counts them (code points), without making an array of them. */
export function codePointLength(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) i++;
    n++;
  }
  return n;
}

/**
 * `text` cut to `max` characters (code points, so no surrogate pair is split) with a note saying so, for a reader that
 * must not receive all of a huge answer (the judge, a report page); the stored answer stays whole. Null when within `max`.
 * Counted in one pass, without splitting the text into an array (answers can be megabytes).
 */
export function truncatedAnswer(text: string, max: number, whereWhole: string): string | null {
  if (text.length <= max) return null; // UTF-16 units ≥ code points
  let points = 0;
  let cut = -1;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (
      code >= 0xdc00 &&
      code <= 0xdfff &&
      i > 0 &&
      text.charCodeAt(i - 1) >= 0xd800 &&
      text.charCodeAt(i - 1) <= 0xdbff
    )
      continue; // low half of a pair
    if (points === max) cut = i;
    points++;
  }
  if (points <= max) return null;
  return `${text.slice(0, cut)}\n\n[answer truncated: ${points.toLocaleString('en')} characters, the first ${max.toLocaleString('en')} shown (maxAnswerChars)${whereWhole ? `; ${whereWhole}` : ''}]`;
}
