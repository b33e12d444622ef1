import { wordCount } from '../../../core/stats/lengthBias';
import { seededRandom } from '../../../core/stats/random';

test("wordCount counts the words text.split(/\\s+/) finds, over every character JavaScript's \\s matches (issue 29)", () => {
  const spaces = [...Array(0x10000).keys()].map((c) => String.fromCharCode(c)).filter((c) => /\s/.test(c));
  expect(spaces).toHaveLength(25);
  const rand = seededRandom('word-count');
  const pieces = [...spaces, 'a', 'Ω', '–', '😀', '\u200b', 'word', '\u0085'];
  for (let k = 0; k < 500; k++) {
    const text = Array.from({ length: Math.floor(rand() * 40) }, () => pieces[Math.floor(rand() * pieces.length)]).join(
      '',
    );
    expect(wordCount(text)).toBe(text.split(/\s+/).filter(Boolean).length);
  }
  expect(wordCount('')).toBe(0);
  expect(wordCount('  two\u00a0words \n')).toBe(2);
});
