/**
 * The layout change of issue 31 as a re-runnable codemod: moves files and folders (`git mv`) and rewrites every relative
 * module path that pointed at them, so the tree type-checks as before. Contents are never touched beyond those paths.
 *
 *   npx tsx scripts/restructure.ts            apply (prints every move and every rewritten path)
 *   npx tsx scripts/restructure.ts --dry-run  print what it would do, change nothing
 *
 * Idempotent: a move whose source is gone and whose target exists is done already; paths are rewritten only when they
 * resolve to a moved file, so a second run changes nothing. Robust to files added since the table was written (every
 * .ts/.js file of the code folders is rewritten, whatever it is) and to moved files having been edited (they are moved
 * whole). A move whose source is missing is reported, not guessed.
 *
 * What it rewrites, in every .ts/.js/.cjs/.mjs file of CODE_DIRS: `import`/`import type`/`export … from`,
 * `import x = require()`, `require()`, `import()`, `import('…')` types, `require.resolve()`, `jest.mock()` and its
 * siblings, and any other string literal starting with `./` or `../` that resolves to a moved file or folder
 * (`path.join(__dirname, '../../workflows')`). In Markdown (README.md, docs/) and in code comments and strings it
 * rewrites repository paths of moved files (`core/llm.ts`, `core/providers/`). What it cannot know it lists at the
 * end for a human (paths built from pieces, `__dirname` in a file that changed depth).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/** Old path → new path, repository-relative. A folder moves whole, with every file in it (CSS, JS, YAML…). */
export const MOVES: Array<[from: string, to: string]> = [
  // 2. contract/: what workflows, activities and the client share. Safe in the workflow sandbox; imports only
  //    @temporalio/workflow (message definitions), other contract files, and core types.
  ['workflows/types.ts', 'contract/run.ts'],
  ['workflows/control.ts', 'contract/control.ts'],
  ['workflows/configChange.ts', 'contract/configChange.ts'],
  ['workflows/errors.ts', 'contract/errors.ts'],
  ['workflows/snapshotTypes.ts', 'contract/snapshot.ts'],
  ['workflows/stageProgress.ts', 'contract/stageProgress.ts'],
  ['workflows/studyTypes.ts', 'contract/study.ts'],

  // 3. core/ in rooms.
  // core/llm: the one place that talks to model endpoints (network), with the provider profiles.
  ['core/llm.ts', 'core/llm/client.ts'],
  ['core/llmTypes.ts', 'core/llm/types.ts'],
  ['core/providers', 'core/llm/providers'],
  ['core/judgeConfig.ts', 'core/llm/judgeConfig.ts'],
  // core/io: files and the local state folder.
  ['core/dataFiles.ts', 'core/io/dataFiles.ts'],
  ['core/files.ts', 'core/io/files.ts'],
  ['core/privateFile.ts', 'core/io/privateFile.ts'],
  ['core/writableDir.ts', 'core/io/writableDir.ts'],
  ['core/home.ts', 'core/io/home.ts'],
  ['core/csv.ts', 'core/io/csv.ts'],
  ['core/jsonl.ts', 'core/io/jsonl.ts'],
  // core/model: the domain's types and the store and protocol interfaces.
  ['core/types.ts', 'core/model/types.ts'],
  ['core/protocol.ts', 'core/model/protocol.ts'],
  ['core/store.ts', 'core/model/store.ts'],
  ['core/retryFailed.ts', 'core/model/retryFailed.ts'],
  ['core/workItems.ts', 'core/model/workItems.ts'],
  ['core/history.ts', 'core/model/history.ts'],
  ['core/hashing.ts', 'core/model/hashing.ts'],
  ['core/inputError.ts', 'core/model/inputError.ts'],
  ['core/names.ts', 'core/model/names.ts'],
  ['core/scoreSchema.ts', 'core/model/scoreSchema.ts'],
  ['core/coverage.ts', 'core/model/coverage.ts'],
  ['core/prompts.ts', 'core/model/prompts.ts'],
  ['core/presentation.ts', 'core/model/presentation.ts'],
  ['core/agentSteps.ts', 'core/model/agentSteps.ts'],
  ['core/rubricOutline.ts', 'core/model/rubricOutline.ts'],
  // core/stats: figures computed from verdicts (pure).
  ['core/stats.ts', 'core/stats/stats.ts'],
  ['core/random.ts', 'core/stats/random.ts'],
  ['core/agreement.ts', 'core/stats/agreement.ts'],
  ['core/consensus.ts', 'core/stats/consensus.ts'],
  ['core/reliability.ts', 'core/stats/reliability.ts'],
  ['core/separability.ts', 'core/stats/separability.ts'],
  ['core/selfPreference.ts', 'core/stats/selfPreference.ts'],
  ['core/lengthBias.ts', 'core/stats/lengthBias.ts'],
  ['core/stability.ts', 'core/stats/stability.ts'],
  ['core/cost.ts', 'core/stats/cost.ts'],
  ['core/panel.ts', 'core/stats/panel.ts'],
  ['core/failureReasons.ts', 'core/stats/failureReasons.ts'],
  ['core/simulation.ts', 'core/stats/simulation.ts'],
  ['core/statsSimulation.ts', 'core/stats/statsSimulation.ts'],
  // core/report: rendering every protocol shares (Markdown, workbook, HTML pages).
  ['core/html', 'core/report/html'],
  ['core/markdown.ts', 'core/report/markdown.ts'],
  ['core/xlsx.ts', 'core/report/xlsx.ts'],
  ['core/costTable.ts', 'core/report/costTable.ts'],
  ['core/agentReport.ts', 'core/report/agentReport.ts'],
  ['core/agentTraces.ts', 'core/report/agentTraces.ts'],
  ['core/statsMarkdown.ts', 'core/report/statsMarkdown.ts'],
  ['core/judgingReport.ts', 'core/report/judgingReport.ts'],
  ['core/panelReport.ts', 'core/report/panelReport.ts'],
  ['core/reliabilityReport.ts', 'core/report/reliabilityReport.ts'],
  // core/compare: two runs, a gate over them, a line over many.
  ['core/compare.ts', 'core/compare/compare.ts'],
  ['core/compareTypes.ts', 'core/compare/types.ts'],
  ['core/compareHtml.ts', 'core/compare/html.ts'],
  ['core/compareMarkdown.ts', 'core/compare/markdown.ts'],
  ['core/groundingCompare.ts', 'core/compare/grounding.ts'],
  ['core/gate.ts', 'core/compare/gate.ts'],
  ['core/gateCandidate.ts', 'core/compare/gateCandidate.ts'],
  ['core/trend.ts', 'core/compare/trend.ts'],
  // core/grounding: claims checked against a copilot's own context.
  ['core/grounding.ts', 'core/grounding/checks.ts'],
  ['core/groundingReport.ts', 'core/grounding/report.ts'],
  ['core/groundingView.ts', 'core/grounding/view.ts'],
  // core/snapshots: query sets, curation and the traffic files they come from.
  ['core/snapshots.ts', 'core/snapshots/snapshots.ts'],
  ['core/curation.ts', 'core/snapshots/curation.ts'],
  ['core/traffic.ts', 'core/snapshots/traffic.ts'],
  ['core/categoriesFile.ts', 'core/snapshots/categoriesFile.ts'],
  ['core/text.ts', 'core/snapshots/text.ts'],

  // 4. services/: use cases the CLI, the view server and the activities share (activities stay thin wrappers).
  ['activities/storedComparison.ts', 'services/storedComparison.ts'],

  // 6. "batch" means the provider Batch API only; several items in one activity is an item group.
  ['activities/callBatch.ts', 'activities/itemGroup.ts'],
  ['workflows/limits/batchSize.ts', 'workflows/limits/itemGroupSize.ts'],
];

/** Folders whose code files have their module paths rewritten. */
const CODE_DIRS = [
  'activities',
  'bin',
  'client',
  'contract',
  'core',
  'rubrics',
  'scripts',
  'services',
  'sim',
  'stores',
  'test',
  'worker',
  'workflows',
];
const CODE_FILE = /\.(ts|tsx|js|cjs|mjs)$/;
/** This script and its test: their paths are the table's and the fixtures', left as written. */
const SELF = ['scripts/restructure.ts', 'test/scripts/restructure.test.ts'];
/** Markdown files whose mentions of moved paths are rewritten. */
const DOC_DIRS = ['docs'];
const DOC_FILES = ['README.md'];
/** How a bare specifier resolves (module resolution "node"), in order. */
const RESOLVE_SUFFIXES = ['', '.ts', '.tsx', '.js', '.cjs', '.mjs', '.json', '/index.ts', '/index.js'];

/** Set by restructure(): the repository worked on, the table applied, whether to change anything. */
let ROOT = '';
let TABLE: Array<[string, string]> = MOVES;
let DRY = false;
const abs = (rel: string) => path.join(ROOT, rel);
const exists = (rel: string) => fs.existsSync(abs(rel));
const isDir = (rel: string) => exists(rel) && fs.statSync(abs(rel)).isDirectory();
const posix = (p: string) => p.split(path.sep).join('/');

const notes: string[] = [];
const note = (s: string) => notes.push(s);

/** Every file under a repository folder, repository-relative, sorted. */
function filesUnder(rel: string): string[] {
  if (!isDir(rel)) return exists(rel) ? [rel] : [];
  const out: string[] = [];
  for (const entry of fs.readdirSync(abs(rel), { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist') continue;
    const child = `${rel}/${entry.name}`;
    if (entry.isDirectory()) out.push(...filesUnder(child));
    else out.push(child);
  }
  return out.sort();
}

/**
 * The table with each source's tests: `test/<from>` (a folder, or `X.test.ts` beside a file's path) moves to
 * `test/<to>`, so tests keep mirroring the code, new ones included.
 */
function withTests(): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const [from, to] of TABLE) {
    out.push([from, to]);
    if (from.startsWith('test/')) continue;
    const strip = (p: string) => p.replace(/\.[cm]?[jt]sx?$/, '');
    if (isDir(from) || (!exists(from) && isDir(`test/${to}`))) out.push([`test/${from}`, `test/${to}`]);
    else out.push([`test/${strip(from)}.test.ts`, `test/${strip(to)}.test.ts`]);
  }
  return out;
}

/** The table expanded to files: each file of a moved folder with its new path. Moves already done are left out. */
function plannedFileMoves(table: Array<[string, string]>): Map<string, string> {
  const moves = new Map<string, string>();
  for (const [from, to] of table) {
    if (!exists(from)) {
      if (!exists(to) && !from.startsWith('test/'))
        note(
          `MISSING: ${from} (nor ${to}) does not exist; its move was skipped. Was it renamed or deleted on another branch?`,
        );
      continue;
    }
    for (const file of filesUnder(from)) {
      const target = to + file.slice(from.length);
      if (exists(target))
        throw new Error(
          `${file} would move to ${target}, which exists already. Move or merge one of them by hand, then run again.`,
        );
      moves.set(file, target);
    }
  }
  return moves;
}

/**
 * Where an old path lives now, for a file that still names a path moved on an earlier run (a branch merged after it):
 * the table applied to the path, if what it gives exists.
 */
function movedEarlier(table: Array<[string, string]>, base: string): string | null {
  for (const [from, to] of table) {
    const strip = (p: string) => p.replace(/\.[cm]?[jt]sx?$/, '');
    let candidate: string | null = null;
    if (base === from || base === strip(from)) candidate = to;
    else if (base.startsWith(`${from}/`)) candidate = to + base.slice(from.length);
    if (!candidate) continue;
    for (const suffix of RESOLVE_SUFFIXES)
      if (exists(candidate + suffix) && !isDir(candidate + suffix)) return candidate + suffix;
  }
  return null;
}

/** Old folder → new folder for every folder whose files all move to one new folder (so `'../providers'` follows). */
function folderMoves(table: Array<[string, string]>): Map<string, string> {
  const out = new Map<string, string>();
  for (const [from, to] of table) if (isDir(from)) out.set(from, to);
  return out;
}

/** The file (or folder) a relative specifier names in the tree as it is now, or null when it names nothing there. */
function resolveSpecifier(fromFile: string, specifier: string): { target: string; kind: 'file' | 'folder' } | null {
  const base = posix(path.posix.normalize(path.posix.join(path.posix.dirname(fromFile), specifier)));
  if (base.startsWith('..')) return null;
  for (const suffix of RESOLVE_SUFFIXES) {
    const candidate = base + suffix;
    if (exists(candidate) && !isDir(candidate))
      return { target: candidate, kind: suffix.startsWith('/index') ? 'folder' : 'file' };
  }
  if (isDir(base)) return { target: base, kind: 'folder' };
  return null;
}

/** A specifier from `fromFile` (at its new path) to `target` (its new path), written the way the old one was. */
function specifierTo(fromFile: string, target: string, old: string, kind: 'file' | 'folder' | 'dir'): string {
  let to = target;
  if (kind === 'folder' && /\/index\.[cm]?[jt]sx?$/.test(to)) to = path.posix.dirname(to);
  else if (kind === 'file') {
    const ext = path.posix.extname(to);
    // Keep an extension only where the old specifier had one (`./client.js`, `./page.css`, `../x.json`).
    if (!old.endsWith(ext)) to = to.slice(0, -ext.length);
  }
  let rel = path.posix.relative(path.posix.dirname(fromFile), to) || '.';
  if (!rel.startsWith('.')) rel = `./${rel}`;
  if (old.endsWith('/') && !rel.endsWith('/')) rel += '/';
  return rel;
}

interface Edit {
  start: number;
  end: number;
  text: string;
}

/** Calls whose first string argument is a module path. */
function isModuleCall(node: ts.CallExpression): boolean {
  const callee = node.expression;
  if (callee.kind === ts.SyntaxKind.ImportKeyword) return true;
  if (ts.isIdentifier(callee)) return callee.text === 'require';
  if (ts.isPropertyAccessExpression(callee) && ts.isIdentifier(callee.expression)) {
    const [obj, fn] = [callee.expression.text, callee.name.text];
    if (obj === 'require') return fn === 'resolve';
    if (obj === 'jest')
      return [
        'mock',
        'doMock',
        'unmock',
        'dontMock',
        'requireActual',
        'requireMock',
        'createMockFromModule',
        'setMock',
      ].includes(fn);
  }
  return false;
}

/** Every relative module path (and every other `./`/`../` string) in a file, with its position. */
function pathLiterals(file: string, text: string): Array<{ node: ts.StringLiteralLike; module: boolean }> {
  const kind = /\.[cm]?js$/.test(file) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const out: Array<{ node: ts.StringLiteralLike; module: boolean }> = [];
  const moduleNodes = new Set<ts.Node>();
  const visit = (node: ts.Node) => {
    let spec: ts.Node | undefined;
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) spec = node.moduleSpecifier;
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference))
      spec = node.moduleReference.expression;
    else if (ts.isCallExpression(node) && isModuleCall(node)) spec = node.arguments[0];
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) spec = node.argument.literal;
    if (spec && ts.isStringLiteralLike(spec)) moduleNodes.add(spec);
    if (ts.isStringLiteralLike(node) && (moduleNodes.has(node) ? /^\.\.?(\/|$)/ : /^\.\.?\//).test(node.text))
      out.push({ node, module: false });
    ts.forEachChild(node, visit);
  };
  visit(source);
  for (const entry of out) entry.module = moduleNodes.has(entry.node);
  return out;
}

/**
 * New module paths for one file. `oldFile` is where it is now, `newFile` where it will be; every literal is resolved in
 * the tree as it is now (before any move), then pointed at its target's new place.
 */
function planFileEdits(
  oldFile: string,
  newFile: string,
  text: string,
  fileMoves: Map<string, string>,
  dirMoves: Map<string, string>,
  table: Array<[string, string]>,
): Edit[] {
  const edits: Edit[] = [];
  for (const { node, module } of pathLiterals(oldFile, text)) {
    const old = node.text;
    let resolved = resolveSpecifier(oldFile, old);
    // A module path naming a folder with no index names nothing (core/stats/ once core/stats.ts moved into it).
    if (module && resolved && isDir(resolved.target)) resolved = null;
    if (!resolved && module) {
      const now = movedEarlier(table, path.posix.normalize(path.posix.join(path.posix.dirname(oldFile), old)));
      if (now) {
        const next = specifierTo(newFile, now, old, /\/index\.[cm]?[jt]s$/.test(now) ? 'folder' : 'file');
        const quote = text[node.getStart()];
        edits.push({ start: node.getStart(), end: node.getEnd(), text: `${quote}${next}${quote}` });
        continue;
      }
      note(`UNRESOLVED: ${oldFile} imports '${old}', which names no file; left as it is.`);
    }
    if (!resolved) continue;
    let target: string;
    let kind: 'file' | 'folder' | 'dir';
    if (isDir(resolved.target)) {
      // A folder named as such (path.join(__dirname, '../../workflows')): it follows a folder move, else stays.
      const moved = [...dirMoves].find(([from]) => resolved.target === from || resolved.target.startsWith(`${from}/`));
      target = moved ? moved[1] + resolved.target.slice(moved[0].length) : resolved.target;
      kind = 'dir';
    } else {
      target = fileMoves.get(resolved.target) ?? resolved.target;
      kind = resolved.kind;
      // `'../providers'` (its index) keeps naming the folder when the whole folder moved.
      if (kind === 'folder') {
        const folder = path.posix.dirname(resolved.target);
        const moved = [...dirMoves].find(([from]) => folder === from || folder.startsWith(`${from}/`));
        if (!moved && fileMoves.has(resolved.target)) kind = 'file';
      }
    }
    if (target === resolved.target && oldFile === newFile) continue;
    // Non-module strings are rewritten only when they name a moved thing (a literal './x' may be anything else).
    if (!module && target === resolved.target) {
      if (oldFile !== newFile)
        note(`CHECK: ${newFile} (moved) holds the path string '${old}' relative to its old place; left as it is.`);
      continue;
    }
    const next = specifierTo(newFile, target, old, kind);
    if (next !== old) {
      const quote = text[node.getStart()];
      edits.push({ start: node.getStart(), end: node.getEnd(), text: `${quote}${next}${quote}` });
    }
  }
  return edits;
}

/** Repository paths of moved files in comments and Markdown (`core/llm.ts` → `core/llm/client.ts`), longest first. */
function mentionRewriter(fileMoves: Map<string, string>, dirMoves: Map<string, string>): (text: string) => string {
  const pairs: Array<[string, string]> = [
    ...fileMoves,
    ...[...dirMoves].map(([a, b]) => [`${a}/`, `${b}/`] as [string, string]),
  ];
  // Moves done on an earlier run too, so a mention merged in since then follows (no new path is an old one).
  for (const [from, to] of TABLE)
    if (!exists(from) && exists(to)) pairs.push(isDir(to) ? [`${from}/`, `${to}/`] : [from, to]);
  pairs.sort((a, b) => b[0].length - a[0].length);
  if (!pairs.length) return (t) => t;
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const pattern = new RegExp(`(?<![\\w./-])(${pairs.map(([a]) => escape(a)).join('|')})(?![\\w-])`, 'g');
  const map = new Map(pairs);
  return (text) => text.replace(pattern, (m) => map.get(m) ?? m);
}

/** Path mentions in a code file's comments and strings (found through the parse, so a `//` inside a string or regex is not a comment). */
function commentEdits(file: string, text: string, rewrite: (t: string) => string): Edit[] {
  const source = ts.createSourceFile(
    file,
    text,
    ts.ScriptTarget.Latest,
    true,
    /\.[cm]?js$/.test(file) ? ts.ScriptKind.JS : ts.ScriptKind.TS,
  );
  const seen = new Set<number>();
  const edits: Edit[] = [];
  const take = (ranges: ts.CommentRange[] | undefined) => {
    for (const r of ranges ?? []) {
      if (seen.has(r.pos)) continue;
      seen.add(r.pos);
      const next = rewrite(text.slice(r.pos, r.end));
      if (next !== text.slice(r.pos, r.end)) edits.push({ start: r.pos, end: r.end, text: next });
    }
  };
  const visit = (node: ts.Node) => {
    take(ts.getLeadingCommentRanges(text, node.pos));
    take(ts.getTrailingCommentRanges(text, node.end));
    // Strings naming a repository path (`'core/judgeConfig.ts'` in a generated doc, a test reading a source file).
    if (
      ts.isStringLiteral(node) ||
      ts.isNoSubstitutionTemplateLiteral(node) ||
      ts.isTemplateHead(node) ||
      ts.isTemplateMiddle(node) ||
      ts.isTemplateTail(node)
    ) {
      const [start, end] = [node.getStart(), node.getEnd()];
      const next = rewrite(text.slice(start, end));
      if (next !== text.slice(start, end)) edits.push({ start, end, text: next });
    }
    // A repository path built from pieces: path.join(REPO, 'core', 'files.ts') → path.join(REPO, 'core', 'io', 'files.ts').
    if (ts.isCallExpression(node) && /^path(\.posix)?\.(join|resolve)$/.test(node.expression.getText(source))) {
      const args = node.arguments;
      let first = args.length;
      while (first > 0 && ts.isStringLiteral(args[first - 1])) first--;
      for (let i = first; i < args.length - 1; i++) {
        const pieces = args.slice(i).map((a) => (a as ts.StringLiteral).text);
        const joined = pieces.join('/');
        let next = rewrite(joined);
        if (next === joined) next = rewrite(`${joined}/`).replace(/\/$/, ''); // a moved folder
        if (next !== joined) {
          const quote = text[args[i].getStart()];
          edits.push({
            start: args[i].getStart(),
            end: args[args.length - 1].getEnd(),
            text: next
              .split('/')
              .filter(Boolean)
              .map((p) => `${quote}${p}${quote}`)
              .join(', '),
          });
          break;
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  take(ts.getLeadingCommentRanges(text, source.endOfFileToken.pos));
  return edits;
}

function applyEdits(text: string, edits: Edit[]): string {
  const sorted = [...edits].sort((a, b) => b.start - a.start);
  let out = text;
  let last = Infinity;
  for (const e of sorted) {
    if (e.end > last) continue; // overlapping (a path string inside a comment range cannot happen; be safe)
    out = out.slice(0, e.start) + e.text + out.slice(e.end);
    last = e.start;
  }
  return out;
}

/** Apply `moves` (default: the table above) to the git checkout at `root`; returns what it printed. */
export function restructure(options: {
  root: string;
  moves?: Array<[string, string]>;
  dryRun?: boolean;
  print?: (line: string) => void;
}): string[] {
  ROOT = options.root;
  TABLE = options.moves ?? MOVES;
  DRY = options.dryRun ?? false;
  notes.length = 0;
  const printed: string[] = [];
  const print = options.print ?? ((line: string) => console.log(line));
  say = (line: string) => {
    printed.push(line);
    print(line);
  };
  main();
  return printed;
}

let say: (line: string) => void = (line) => console.log(line);

function main(): void {
  const table = withTests();
  const fileMoves = plannedFileMoves(table);
  const dirMoves = folderMoves(table);
  const rewriteMentions = mentionRewriter(fileMoves, dirMoves);
  const codeFiles = CODE_DIRS.flatMap(filesUnder).filter(
    (f) => CODE_FILE.test(f) && !f.endsWith('.d.ts') && !SELF.includes(f),
  );

  // 1. Plan every file's new text against the tree as it is (resolution needs the old layout).
  const newTexts = new Map<string, string>();
  let pathsRewritten = 0;
  for (const file of codeFiles) {
    const text = fs.readFileSync(abs(file), 'utf8');
    const newFile = fileMoves.get(file) ?? file;
    const edits = planFileEdits(file, newFile, text, fileMoves, dirMoves, table);
    const modulePaths = edits.length;
    // Comments: only ranges no module edit touches (they never overlap: a string literal is not in a comment).
    edits.push(...commentEdits(file, text, rewriteMentions));
    if (!edits.length) continue;
    const next = applyEdits(text, edits);
    if (next !== text) {
      newTexts.set(file, next);
      pathsRewritten += modulePaths;
      say(
        `rewrite ${file}${newFile !== file ? ` (→ ${newFile})` : ''}: ${modulePaths} module path(s)${edits.length > modulePaths ? `, ${edits.length - modulePaths} path mention(s) in comments or strings` : ''}`,
      );
    }
    if (
      newFile !== file &&
      /\b__dirname\b|\b__filename\b/.test(text) &&
      path.posix.dirname(newFile).split('/').length !== path.posix.dirname(file).split('/').length
    ) {
      note(
        `CHECK: ${file} → ${newFile} uses __dirname/__filename and now sits at another depth: check every path built from it.`,
      );
    }
  }
  const docFiles = [...DOC_FILES.filter(exists), ...DOC_DIRS.flatMap(filesUnder).filter((f) => f.endsWith('.md'))];
  for (const file of docFiles) {
    const text = fs.readFileSync(abs(file), 'utf8');
    const next = rewriteMentions(text);
    if (next !== text) {
      newTexts.set(file, next);
      say(`rewrite ${file}: paths mentioned`);
    }
  }
  if (DRY) {
    for (const [from, to] of fileMoves) say(`move ${from} → ${to}`);
  } else {
    // 2. Write the new texts (at the old places), then move.
    for (const [file, text] of newTexts) fs.writeFileSync(abs(file), text);
    for (const [from, to] of fileMoves) {
      fs.mkdirSync(path.dirname(abs(to)), { recursive: true });
      const tracked = execFileSync('git', ['ls-files', '--', from], { cwd: ROOT, encoding: 'utf8' }).trim() !== '';
      if (tracked) execFileSync('git', ['mv', from, to], { cwd: ROOT });
      else fs.renameSync(abs(from), abs(to));
      say(`move ${from} → ${to}${tracked ? '' : ' (untracked)'}`);
    }
    // Folders left empty by the moves (deepest first, so a moved folder's empty subfolders go before it).
    const removeEmpty = (dir: string): void => {
      if (!isDir(dir)) return;
      for (const entry of fs.readdirSync(abs(dir), { withFileTypes: true }))
        if (entry.isDirectory()) removeEmpty(`${dir}/${entry.name}`);
      if (fs.readdirSync(abs(dir)).length === 0) fs.rmdirSync(abs(dir));
    };
    for (const [from] of table) {
      removeEmpty(isDir(from) ? from : path.posix.dirname(from));
      for (
        let dir = path.posix.dirname(from);
        dir && dir !== '.' && isDir(dir) && fs.readdirSync(abs(dir)).length === 0;
        dir = path.posix.dirname(dir)
      )
        fs.rmdirSync(abs(dir));
    }
  }
  say(
    `\n${fileMoves.size} file(s) ${DRY ? 'to move' : 'moved'}, ${pathsRewritten} module path(s) in ${newTexts.size} file(s) ${DRY ? 'to rewrite' : 'rewritten'}.`,
  );
  if (!fileMoves.size && !newTexts.size) say('Nothing to do: the layout is already the new one.');
  if (notes.length) say(`\nFor a human to check:\n${[...new Set(notes)].map((n) => `  - ${n}`).join('\n')}`);
}

if (require.main === module) {
  const root = execFileSync('git', ['rev-parse', '--show-toplevel'], { encoding: 'utf8' }).trim();
  restructure({ root, dryRun: process.argv.slice(2).includes('--dry-run') });
}
