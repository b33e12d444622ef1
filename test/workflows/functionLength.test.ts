import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const WORKFLOWS = path.resolve(__dirname, '..', '..', 'workflows');
const MAX_LINES = 80;

/** Every function (declarations, methods, arrows, function expressions) in a source text longer than `max` lines. */
function longFunctions(file: string, text: string, max: number): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const long: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      const name = (node as ts.FunctionLikeDeclaration).name?.getText(source) ?? '(anonymous)';
      if (lines > max) long.push(`${file}:${first + 1} ${name}: ${lines} lines`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return long;
}

function sources(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
    );
}

test(`no function in workflows/ is over ${MAX_LINES} lines`, () => {
  const long = sources(WORKFLOWS).flatMap((file) =>
    longFunctions(path.relative(WORKFLOWS, file), fs.readFileSync(file, 'utf8'), MAX_LINES),
  );
  expect(long).toEqual([]);
});

test('the check sees functions of every kind', () => {
  const body = (n: number) => Array.from({ length: n }, (_, k) => `  void ${k};`).join('\n');
  const text = [
    `function a() {\n${body(3)}\n}`,
    `const b = () => {\n${body(3)}\n};`,
    `class C {\n  m() {\n${body(3)}\n  }\n}`,
  ].join('\n');
  expect(longFunctions('x.ts', text, 4)).toEqual([
    'x.ts:1 a: 5 lines',
    'x.ts:6 (anonymous): 5 lines',
    'x.ts:12 m: 5 lines',
  ]);
  expect(longFunctions('x.ts', text, 5)).toEqual([]);
});
