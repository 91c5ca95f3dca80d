import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const SRC = join(ROOT, 'src');

/** Every .ts/.tsx file under dir, as posix paths relative to src/. */
export function sourceFiles(dir: string = SRC): string[] {
  const out: string[] = [];
  for (const ent of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, ent.name);
    if (ent.isDirectory()) out.push(...sourceFiles(p));
    else if (/\.tsx?$/.test(ent.name) && !ent.name.endsWith('.d.ts')) out.push(relative(SRC, p).split(sep).join('/'));
  }
  return out.sort();
}

export function readSource(rel: string): string {
  return readFileSync(join(SRC, rel), 'utf8');
}

/** Drops // and /* comments so prose about frames does not trip the scans (strings are kept). */
export function stripComments(src: string): string {
  return src.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

/** The imports of one file (static, dynamic, re-exports, import types), each marked whether only types are imported. */
export interface ImportRef {
  spec: string;
  typeOnly: boolean;
}

export function importsOf(fileName: string, source: string): ImportRef[] {
  const sf = ts.createSourceFile(fileName, source, ts.ScriptTarget.ES2022, true);
  const out: ImportRef[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const c = node.importClause;
      const named = c?.namedBindings && ts.isNamedImports(c.namedBindings) ? c.namedBindings.elements : undefined;
      const allTypeSpecifiers = !!named && named.length > 0 && !c?.name && named.every((e) => e.isTypeOnly);
      out.push({ spec: node.moduleSpecifier.text, typeOnly: !!c && (c.isTypeOnly || allTypeSpecifiers) });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const named = node.exportClause && ts.isNamedExports(node.exportClause) ? node.exportClause.elements : undefined;
      const allType = !!named && named.length > 0 && named.every((e) => e.isTypeOnly);
      out.push({ spec: node.moduleSpecifier.text, typeOnly: node.isTypeOnly || allType });
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const a = node.arguments[0];
      if (a && ts.isStringLiteralLike(a)) out.push({ spec: a.text, typeOnly: false });
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      out.push({ spec: node.argument.literal.text, typeOnly: true });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}
