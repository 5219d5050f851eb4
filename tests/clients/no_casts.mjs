// Fails (exit 1) when a TypeScript file uses a type assertion (`x as T`, `<T>x`), a non-null
// assertion (`x!`) or the `any` type: the generated types must be enough for a client program.
// Uses TypeScript's own parser, so words in comments and strings do not count.
// Usage: node no_casts.mjs FILE.ts...
import { readFileSync } from "node:fs";
import ts from "typescript";

const FORBIDDEN = new Map([
  [ts.SyntaxKind.AsExpression, "type assertion `as`"],
  [ts.SyntaxKind.TypeAssertionExpression, "type assertion `<T>x`"],
  [ts.SyntaxKind.NonNullExpression, "non-null assertion `!`"],
  [ts.SyntaxKind.AnyKeyword, "the `any` type"],
]);

let found = 0;
for (const file of process.argv.slice(2)) {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const visit = (node) => {
    const what = FORBIDDEN.get(node.kind);
    // `as const` only narrows a literal; it asserts nothing about a value's type.
    const asConst = node.kind === ts.SyntaxKind.AsExpression && ts.isConstTypeReference(node.type);
    if (what !== undefined && !asConst) {
      const { line, character } = source.getLineAndCharacterOfPosition(node.getStart(source));
      console.log(`${file}:${line + 1}:${character + 1}: ${what}: ${node.getText(source)}`);
      found++;
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}
process.exit(found === 0 ? 0 : 1);
