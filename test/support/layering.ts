import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * judgeflow's layers, bottom to top. A file may import its own layer's shared code and anything below, never above:
 *   0 core/, contract/                        domain (core/ in rooms, see CORE_ROOMS) and what workflows share
 *   1 rubrics/<protocol>/, activities/adapters/, stores/, sim/   each imports core/ and its own folder only
 *   2 activities/, services/, workflows/      workflows import only `@temporalio/workflow`, other workflow files,
 *                                             contract/ and types
 *   3 worker/, client/, scripts/, bin/        config assembly, provisioning, the CLI
 * contract/ imports values only from `@temporalio/workflow` (message definitions) and other contract files; types from
 * core/ too. activities/, client/ and worker/ import from workflows/ only its index (the workflow functions).
 * Tests (test/) sit outside the layers. docs/architecture.md says the same in prose.
 */
interface Layer {
  level: number;
  /** Folder prefix (with trailing slash) whose files belong to this layer. */
  folder: string;
  /** Level-1 parts are siblings: each may import only core/ and its own part. */
  part?: (file: string) => string;
}

const LAYERS: Layer[] = [
  { level: 1, folder: 'activities/adapters/', part: () => 'activities/adapters/' },
  { level: 0, folder: 'core/' },
  { level: 0, folder: 'contract/' },
  // rubrics/index.ts is the registry: it may import each protocol's folder (its index), nothing deeper.
  {
    level: 1,
    folder: 'rubrics/',
    part: (f) => (f.split('/').length > 2 ? f.split('/').slice(0, 2).join('/') + '/' : 'rubrics/'),
  },
  { level: 1, folder: 'stores/', part: () => 'stores/' },
  { level: 1, folder: 'sim/', part: () => 'sim/' },
  { level: 2, folder: 'activities/' },
  { level: 2, folder: 'services/' },
  { level: 2, folder: 'workflows/' },
  { level: 3, folder: 'worker/' },
  { level: 3, folder: 'client/' },
  { level: 3, folder: 'scripts/' },
  { level: 3, folder: 'bin/' },
];

/**
 * What client/ may take from activities/ (besides adapters/, for config validation): the run readers of deps.ts and the
 * activities it runs in-process for the same effect as the worker (resume's config replacement, curation, artefacts).
 * A use case the CLI shares with activities (a run's report, a stored comparison) belongs in services/.
 */
const CLIENT_ACTIVITY_IMPORTS = new Set([
  'activities/deps.ts',
  'activities/index.ts',
  'activities/runConfig.ts',
  'activities/curate.ts',
  'activities/artefacts.ts',
]);

export function layerOf(file: string): Layer | null {
  return LAYERS.find((l) => file.startsWith(l.folder)) ?? null;
}

export interface ImportRef {
  specifier: string;
  /** `import type`, `export type ... from`, or an import whose every name is `type`. */
  typeOnly: boolean;
  line: number;
}

/** Every module a file refers to: import / import type / export … from / import x = require() / require() / import(). */
export function importsOf(fileName: string, text: string): ImportRef[] {
  const source = ts.createSourceFile(
    fileName,
    text,
    ts.ScriptTarget.Latest,
    true,
    fileName.endsWith('.js') ? ts.ScriptKind.JS : ts.ScriptKind.TS,
  );
  const out: ImportRef[] = [];
  const add = (node: ts.Node, spec: ts.Expression | undefined, typeOnly: boolean) => {
    if (spec && ts.isStringLiteralLike(spec))
      out.push({
        specifier: spec.text,
        typeOnly,
        line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1,
      });
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      const named =
        clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : undefined;
      const typeOnly = Boolean(
        clause &&
        (clause.isTypeOnly || (!clause.name && named && named.length > 0 && named.every((e) => e.isTypeOnly))),
      );
      add(node, node.moduleSpecifier, typeOnly);
    } else if (ts.isExportDeclaration(node)) {
      const named = node.exportClause && ts.isNamedExports(node.exportClause) ? node.exportClause.elements : undefined;
      add(
        node,
        node.moduleSpecifier,
        node.isTypeOnly || Boolean(named && named.length > 0 && named.every((e) => e.isTypeOnly)),
      );
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node, node.moduleReference.expression, node.isTypeOnly);
    } else if (ts.isCallExpression(node)) {
      const isRequire = ts.isIdentifier(node.expression) && node.expression.text === 'require';
      const isDynamicImport = node.expression.kind === ts.SyntaxKind.ImportKeyword;
      const isResolve =
        ts.isPropertyAccessExpression(node.expression) &&
        ts.isIdentifier(node.expression.expression) &&
        node.expression.expression.text === 'require' &&
        node.expression.name.text === 'resolve';
      if ((isRequire || isDynamicImport || isResolve) && node.arguments.length) add(node, node.arguments[0], false);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node, node.argument.literal as ts.Expression, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/** A relative specifier resolved to a repository path (without extension), or null for a package / builtin. */
function resolveRelative(from: string, specifier: string): string | null {
  if (!specifier.startsWith('.')) return null;
  return path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier)).replace(/\.(ts|js)$/, '');
}

/** The folder-or-file target matched against layers: `../rubrics` is rubrics/index. */
function targetFile(resolved: string, exists: (p: string) => boolean): string {
  for (const candidate of [`${resolved}.ts`, `${resolved}.js`, `${resolved}/index.ts`])
    if (exists(candidate)) return candidate;
  return `${resolved}.ts`;
}

export interface Violation {
  file: string;
  line: number;
  specifier: string;
  reason: string;
}

/** Check files (repository-relative paths with their text) against the layer rules. */
export function checkLayering(
  files: Array<{ file: string; text: string }>,
  exists: (p: string) => boolean,
): Violation[] {
  const violations: Violation[] = [];
  for (const { file, text } of files) {
    const from = layerOf(file);
    if (!from) continue;
    for (const ref of importsOf(file, text)) {
      const report = (reason: string) => violations.push({ file, line: ref.line, specifier: ref.specifier, reason });
      const resolved = resolveRelative(file, ref.specifier);
      if (from.folder === 'workflows/') {
        // Workflow code runs in the deterministic sandbox: it may use the workflow API, other workflow files, and types.
        if (ref.typeOnly || ref.specifier === '@temporalio/workflow') continue;
        if (resolved && (resolved.startsWith('workflows/') || resolved.startsWith('contract/'))) continue;
        report(
          'workflow code may import only @temporalio/workflow, other workflow files, contract/, and types (import type)',
        );
        continue;
      }
      if (from.folder === 'contract/') {
        // Shared with the sandbox: message definitions, other contract files, and types of the domain.
        if (ref.specifier === '@temporalio/workflow' || (resolved && resolved.startsWith('contract/'))) continue;
        if (ref.typeOnly && resolved && resolved.startsWith('core/')) continue;
        report('contract/ may import only @temporalio/workflow, other contract files, and core/ types (import type)');
        continue;
      }
      if (!resolved) continue;
      const target = targetFile(resolved, exists);
      if (
        target.startsWith('workflows/') &&
        target !== 'workflows/index.ts' &&
        ['activities/', 'client/', 'worker/'].includes(from.folder)
      ) {
        report(
          'activities/, client/ and worker/ import from workflows/ only its index (the workflow functions); shared types and messages are in contract/',
        );
        continue;
      }
      if (
        from.folder === 'client/' &&
        target.startsWith('activities/') &&
        !target.startsWith('activities/adapters/') &&
        !CLIENT_ACTIVITY_IMPORTS.has(target)
      ) {
        report(
          'client/ reaches activities/ only through deps.ts, adapters/ and the activities it runs in-process; a use case the CLI shares with activities belongs in services/',
        );
        continue;
      }
      const to = layerOf(target);
      if (!to) {
        // Only the top layer's tooling (scripts/record-histories.ts) may reuse test helpers.
        if (from.level < 3) report(`imports ${target}, which belongs to no layer (test code?)`);
        continue;
      }
      if (to.level > from.level) {
        report(
          `layer ${from.level} (${from.folder}) imports layer ${to.level} (${to.folder}): lower layers never import higher ones`,
        );
        continue;
      }
      if (from.level === 1 && to.level === 1) {
        const own = from.part!(file);
        const isRegistryImport =
          own === 'rubrics/' &&
          to.folder === 'rubrics/' &&
          target.split('/').length === 3 &&
          target.endsWith('/index.ts');
        if (to.part!(target) !== own && !isRegistryImport)
          report(`${own} may import only core/ and its own folder, not ${to.part!(target)}`);
      }
    }
  }
  return violations;
}

const SOURCE_DIRS = [
  'contract',
  'services',
  'core',
  'rubrics',
  'activities',
  'stores',
  'sim',
  'workflows',
  'worker',
  'client',
  'scripts',
  'bin',
];

/** Every source file of the repository at `root`, repository-relative. */
export function sourceFiles(root: string): Array<{ file: string; text: string }> {
  const out: Array<{ file: string; text: string }> = [];
  const walk = (dir: string) => {
    if (!fs.existsSync(path.join(root, dir))) return;
    for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(rel);
      else if (/\.(ts|js)$/.test(entry.name) && !entry.name.endsWith('.d.ts'))
        out.push({ file: rel, text: fs.readFileSync(path.join(root, rel), 'utf8') });
    }
  };
  SOURCE_DIRS.forEach(walk);
  return out;
}

export const describeViolation = (v: Violation) => `${v.file}:${v.line} imports '${v.specifier}': ${v.reason}`;

/** The repository file a relative import names (`./x` → x.ts, x.js or x/index.ts), or null for a package / builtin. */
export function importTarget(from: string, specifier: string, exists: (p: string) => boolean): string | null {
  const resolved = resolveRelative(from, specifier);
  return resolved === null ? null : targetFile(resolved, exists);
}

/**
 * Every import circle between files (type-only imports included: a circle of types is still two files that cannot
 * be understood apart), each as the files on it in order, found as the strongly connected components of the graph.
 */
export function importCycles(files: Array<{ file: string; text: string }>, exists: (p: string) => boolean): string[][] {
  const known = new Set(files.map((f) => f.file));
  const edges = new Map<string, string[]>();
  for (const { file, text } of files) {
    const targets = importsOf(file, text)
      .map((ref) => importTarget(file, ref.specifier, exists))
      .filter((t): t is string => t !== null && known.has(t) && t !== file);
    edges.set(file, [...new Set(targets)].sort());
  }
  // Tarjan's algorithm, iterative so a deep chain cannot overflow the stack.
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  for (const start of [...known].sort()) {
    if (index.has(start)) continue;
    const work: Array<{ node: string; next: number }> = [{ node: start, next: 0 }];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length) {
      const top = work[work.length - 1];
      const out = edges.get(top.node) ?? [];
      if (top.next < out.length) {
        const to = out[top.next++];
        if (!index.has(to)) {
          index.set(to, counter);
          low.set(to, counter++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, next: 0 });
        } else if (onStack.has(to)) low.set(top.node, Math.min(low.get(top.node)!, index.get(to)!));
        continue;
      }
      work.pop();
      if (work.length)
        low.set(work[work.length - 1].node, Math.min(low.get(work[work.length - 1].node)!, low.get(top.node)!));
      if (low.get(top.node) === index.get(top.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== top.node);
        if (component.length > 1) cycles.push(component.sort());
      }
    }
  }
  return cycles.sort((a, b) => a[0].localeCompare(b[0]));
}

/**
 * core/'s rooms. Only the I/O rooms touch files, sockets or the network; every other room is pure (its functions
 * take data and return data), so a report or a statistic can be tested without a disk or a server.
 */
export const CORE_ROOMS: Record<string, { io: boolean; purpose: string }> = {
  'core/model/': { io: false, purpose: 'domain types, the store and protocol interfaces, rubric prompts and hashing' },
  'core/stats/': { io: false, purpose: 'figures from verdicts: intervals, agreement, consensus, cost, panels' },
  'core/report/': { io: false, purpose: 'rendering every protocol shares: Markdown, workbook, HTML pages' },
  'core/compare/': { io: false, purpose: 'two runs paired, a regression gate, a trend over runs' },
  'core/grounding/': { io: false, purpose: "claims checked against a copilot's own context, and their report blocks" },
  'core/snapshots/': { io: false, purpose: 'query sets, curation, traffic files, near-duplicate text' },
  'core/study/': { io: false, purpose: 'human studies: design, analysis, calibrated scores' },
  'core/io/': { io: true, purpose: 'files, CSV/JSONL, the local state folder' },
  'core/llm/': { io: true, purpose: 'the LLM client, request types, provider profiles and batch APIs' },
};

/** Browser scripts served with a page: they run in the reader's browser, not in judgeflow. */
const BROWSER_ASSETS = new Set(['core/report/html/client.js']);
const IO_MODULES = /^(node:)?(fs|fs\/promises|net|http|https|http2|child_process|dgram|tls)$/;

/** core/ files outside a room, and pure-room files that import fs, net, http (…) or call fetch. */
export function checkCoreRooms(files: Array<{ file: string; text: string }>): Violation[] {
  const violations: Violation[] = [];
  for (const { file, text } of files) {
    if (!file.startsWith('core/')) continue;
    const room = Object.keys(CORE_ROOMS).find((r) => file.startsWith(r));
    if (!room) {
      violations.push({
        file,
        line: 1,
        specifier: '',
        reason: `core/ files live in a room (${Object.keys(CORE_ROOMS).join(', ')}): move it into the one it serves`,
      });
      continue;
    }
    if (CORE_ROOMS[room].io || BROWSER_ASSETS.has(file)) continue;
    for (const ref of importsOf(file, text)) {
      if (IO_MODULES.test(ref.specifier) && !ref.typeOnly)
        violations.push({
          file,
          line: ref.line,
          specifier: ref.specifier,
          reason: `${room} is pure: files and network belong in core/io/ or core/llm/`,
        });
    }
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node) => {
      if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'fetch') {
        violations.push({
          file,
          line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1,
          specifier: 'fetch',
          reason: `${room} is pure: network calls belong in core/llm/`,
        });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return violations;
}
