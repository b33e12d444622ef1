import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * judgeflow's layers, bottom to top. A file may import its own layer's shared code and anything below, never above:
 *   0 core/                                   domain: types, statistics, text, CSV/JSONL, store and protocol interfaces
 *   1 rubrics/<protocol>/, activities/adapters/, stores/, sim/   each imports core/ and its own folder only
 *   2 activities/, workflows/                 workflows import only `@temporalio/workflow`, other workflow files and types
 *   3 worker/, client/, scripts/, bin/        config assembly, provisioning, the CLI
 * Tests (test/) sit outside the layers.
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
  // rubrics/index.ts is the registry: it may import each protocol's folder (its index), nothing deeper.
  { level: 1, folder: 'rubrics/', part: (f) => (f.split('/').length > 2 ? f.split('/').slice(0, 2).join('/') + '/' : 'rubrics/') },
  { level: 1, folder: 'stores/', part: () => 'stores/' },
  { level: 1, folder: 'sim/', part: () => 'sim/' },
  { level: 2, folder: 'activities/' },
  { level: 2, folder: 'workflows/' },
  { level: 3, folder: 'worker/' },
  { level: 3, folder: 'client/' },
  { level: 3, folder: 'scripts/' },
  { level: 3, folder: 'bin/' },
];

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
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, fileName.endsWith('.js') ? ts.ScriptKind.JS : ts.ScriptKind.TS);
  const out: ImportRef[] = [];
  const add = (node: ts.Node, spec: ts.Expression | undefined, typeOnly: boolean) => {
    if (spec && ts.isStringLiteralLike(spec)) out.push({ specifier: spec.text, typeOnly, line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1 });
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      const named = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : undefined;
      const typeOnly = Boolean(clause && (clause.isTypeOnly || (!clause.name && named && named.length > 0 && named.every((e) => e.isTypeOnly))));
      add(node, node.moduleSpecifier, typeOnly);
    } else if (ts.isExportDeclaration(node)) {
      const named = node.exportClause && ts.isNamedExports(node.exportClause) ? node.exportClause.elements : undefined;
      add(node, node.moduleSpecifier, node.isTypeOnly || Boolean(named && named.length > 0 && named.every((e) => e.isTypeOnly)));
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node, node.moduleReference.expression, node.isTypeOnly);
    } else if (ts.isCallExpression(node)) {
      const isRequire = ts.isIdentifier(node.expression) && node.expression.text === 'require';
      const isDynamicImport = node.expression.kind === ts.SyntaxKind.ImportKeyword;
      const isResolve = ts.isPropertyAccessExpression(node.expression) && ts.isIdentifier(node.expression.expression) && node.expression.expression.text === 'require' && node.expression.name.text === 'resolve';
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
  for (const candidate of [`${resolved}.ts`, `${resolved}.js`, `${resolved}/index.ts`]) if (exists(candidate)) return candidate;
  return `${resolved}.ts`;
}

export interface Violation {
  file: string;
  line: number;
  specifier: string;
  reason: string;
}

/** Check files (repository-relative paths with their text) against the layer rules. */
export function checkLayering(files: Array<{ file: string; text: string }>, exists: (p: string) => boolean): Violation[] {
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
        if (resolved && resolved.startsWith('workflows/')) continue;
        report('workflow code may import only @temporalio/workflow, other workflow files, and types (import type)');
        continue;
      }
      if (!resolved) continue;
      const target = targetFile(resolved, exists);
      const to = layerOf(target);
      if (!to) {
        // Only the top layer's tooling (scripts/record-histories.ts) may reuse test helpers.
        if (from.level < 3) report(`imports ${target}, which belongs to no layer (test code?)`);
        continue;
      }
      if (to.level > from.level) {
        report(`layer ${from.level} (${from.folder}) imports layer ${to.level} (${to.folder}): lower layers never import higher ones`);
        continue;
      }
      if (from.level === 1 && to.level === 1) {
        const own = from.part!(file);
        const isRegistryImport = own === 'rubrics/' && to.folder === 'rubrics/' && target.split('/').length === 3 && target.endsWith('/index.ts');
        if (to.part!(target) !== own && !isRegistryImport) report(`${own} may import only core/ and its own folder, not ${to.part!(target)}`);
      }
    }
  }
  return violations;
}

const SOURCE_DIRS = ['core', 'rubrics', 'activities', 'stores', 'sim', 'workflows', 'worker', 'client', 'scripts', 'bin'];

/** Every source file of the repository at `root`, repository-relative. */
export function sourceFiles(root: string): Array<{ file: string; text: string }> {
  const out: Array<{ file: string; text: string }> = [];
  const walk = (dir: string) => {
    if (!fs.existsSync(path.join(root, dir))) return;
    for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(rel);
      else if (/\.(ts|js)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push({ file: rel, text: fs.readFileSync(path.join(root, rel), 'utf8') });
    }
  };
  SOURCE_DIRS.forEach(walk);
  return out;
}

export const describeViolation = (v: Violation) => `${v.file}:${v.line} imports '${v.specifier}': ${v.reason}`;
