import fs from 'node:fs';
import path from 'node:path';
import { PATCHES } from '../../workflows/patches';

const WORKFLOWS = path.resolve(__dirname, '..', '..', 'workflows');

/** Every `patched('id')` and `deprecatePatch('id')` call in the workflow sources, with where it is. */
function patchCalls(root = WORKFLOWS): Array<{ id: string | null; at: string }> {
  const calls: Array<{ id: string | null; at: string }> = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (entry.name.endsWith('.ts') && entry.name !== 'patches.ts') {
        const text = fs.readFileSync(file, 'utf8');
        for (const m of text.matchAll(/\b(?:patched|deprecatePatch)\s*\(\s*(?:'([^']*)'|"([^"]*)"|`([^`]*)`)?/g)) {
          const line = text.slice(0, m.index).split('\n').length;
          calls.push({ id: m[1] ?? m[2] ?? m[3] ?? null, at: `${path.relative(root, file)}:${line}` });
        }
      }
    }
  };
  walk(root);
  return calls;
}

test('every patch id used in workflows/ is a string literal registered in workflows/patches.ts', () => {
  const registered = new Set(PATCHES.map((p) => p.id));
  const unregistered = patchCalls().filter((c) => c.id === null || !registered.has(c.id));
  expect(unregistered.map((c) => `${c.at}: ${c.id ?? '(not a string literal)'}`)).toEqual([]);
});

test('every registered patch says when it was added, why, and when it can be removed; ids are unique', () => {
  for (const p of PATCHES) {
    expect(p.added).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(p.reason.trim()).not.toBe('');
    expect(p.removableWhen.trim()).not.toBe('');
  }
  expect(new Set(PATCHES.map((p) => p.id)).size).toBe(PATCHES.length);
});

test('the scan finds patch calls, literal or not (the check above is not vacuous)', () => {
  const dir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'jf-patches-'));
  fs.mkdirSync(path.join(dir, 'limits'));
  fs.writeFileSync(
    path.join(dir, 'limits', 'x.ts'),
    "if (patched('probe-only')) void 0;\ndeprecatePatch(\"old-one\");\nconst id = 'y';\npatched(id);\n",
  );
  try {
    expect(patchCalls(dir)).toEqual([
      { id: 'probe-only', at: 'limits/x.ts:1' },
      { id: 'old-one', at: 'limits/x.ts:2' },
      { id: null, at: 'limits/x.ts:4' },
    ]);
  } finally {
    fs.rmSync(dir, { recursive: true });
  }
});
