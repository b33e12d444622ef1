/**
 * judgeflow's one seeded PRNG and one shuffle. Every seeded choice (bootstrap and permutation tests, curation samples,
 * CryptoAnalystBench presentation order, the simulator's answers) draws from here, so the same seed always gives the same
 * result on any machine. Pure JavaScript (no node: imports): it may run inside a Temporal workflow sandbox.
 */

/**
 * cyrb128: a fast 128-bit string hash. Used only to spread an arbitrary seed over the PRNG state;
 * it is not cryptographic, which is fine because we need reproducibility, not secrecy.
 */
function hashSeed(seed: string): [number, number, number, number] {
  let h1 = 1779033703;
  let h2 = 3144134277;
  let h3 = 1013904242;
  let h4 = 2773480762;
  for (let i = 0; i < seed.length; i++) {
    const k = seed.charCodeAt(i);
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
  h1 ^= h2 ^ h3 ^ h4;
  h2 ^= h1;
  h3 ^= h1;
  h4 ^= h1;
  return [h1 >>> 0, h2 >>> 0, h3 >>> 0, h4 >>> 0];
}

/** A uniform [0, 1) generator. */
export type Random = () => number;

/**
 * Deterministic PRNG returning floats in [0, 1). The seed is hashed (cyrb128) into the 128-bit state
 * of sfc32, a small generator that passes PractRand; numbers are stringified first so that
 * `seededRandom(1)` and `seededRandom('1')` agree.
 */
export function seededRandom(seed: string | number): Random {
  const state = seededState(seed);
  return () => sfc32Next(state) / 4294967296;
}

/**
 * The sfc32 state seededRandom(seed) starts from (the seed hashed, the first 15 outputs discarded), as int32 words
 * [a, b, c, d]. For the bootstrap's and permutation tests' inner loops, which step the same generator with the state in
 * local variables (core/stats/stats.ts): a closure call per draw was most of a large report's time (issue 29). Those loops
 * and sfc32Next must stay the same arithmetic, so a seed gives the same numbers either way.
 */
export function seededState(seed: string | number): Int32Array {
  const state = Int32Array.from(hashSeed(String(seed)));
  for (let i = 0; i < 15; i++) sfc32Next(state);
  return state;
}

/** One sfc32 step on `state` (updated in place): the next output as an unsigned 32-bit integer. */
export function sfc32Next(state: Int32Array): number {
  let a = state[0];
  let b = state[1];
  let c = state[2];
  let d = state[3];
  let t = (a + b) | 0;
  a = b ^ (b >>> 9);
  b = (c + (c << 3)) | 0;
  c = (c << 21) | (c >>> 11);
  d = (d + 1) | 0;
  t = (t + d) | 0;
  c = (c + t) | 0;
  state[0] = a;
  state[1] = b;
  state[2] = c;
  state[3] = d;
  return t >>> 0;
}

/** Uniform integer in [0, n). */
export function randomIndex(rand: Random, n: number): number {
  return Math.floor(rand() * n);
}

/** Fisher–Yates on a copy. */
export function shuffled<T>(items: readonly T[], rand: Random): T[] {
  const out = items.slice();
  for (let i = out.length - 1; i > 0; i--) {
    const j = randomIndex(rand, i + 1);
    const tmp = out[i] as T;
    out[i] = out[j] as T;
    out[j] = tmp;
  }
  return out;
}
