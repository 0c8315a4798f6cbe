// usage: E4_ROOT=/tmp/e4 node sig.cjs <module> [names,comma|-] [--full|--doc]   (prints exports, or declarations of the named exports of the installed effect 4.1.5)
const ts = require(process.env.TS_PATH || "/work/main/node_modules/typescript");
const path = require("path");
const [mod, namesArg, flag] = process.argv.slice(2);
const E4 = process.env.E4_ROOT || "/tmp/e4"; const entry = E4 + "/__entry.ts";
const fs=require("fs");
fs.writeFileSync(entry, `export * as M from ${JSON.stringify(mod)}\n`);
const program = ts.createProgram([entry], { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, strict: true, noEmit: true, skipLibCheck: true, types: [] });
const checker = program.getTypeChecker();
const sf = program.getSourceFile(entry);
const modSym = checker.getSymbolAtLocation(sf.statements[0].moduleSpecifier);
if (!modSym) { console.log("MODULE NOT RESOLVED:", mod); process.exit(1); }
const exps = checker.getExportsOfModule(modSym);
if (!namesArg || namesArg === "-") { console.log(exps.map(e=>e.name).sort().join(" ")); process.exit(0); }
const names = namesArg.split(",");
const strip = (txt) => txt.replace(/\/\*\*[\s\S]*?\*\//g, "").replace(/^\s*\n/gm, "");
for (const n of names) {
  const s = exps.find(e => e.name === n);
  if (!s) { console.log(`### ${n}: NOT EXPORTED`); continue; }
  let sym = s; if (sym.flags & ts.SymbolFlags.Alias) sym = checker.getAliasedSymbol(sym);
  const decls = sym.declarations || [];
  console.log(`### ${n}  (${decls.length} decl)`);
  for (const d of decls) {
    let node = d; if (ts.isVariableDeclaration(d)) node = d.parent.parent;
    let t = flag === "--doc" ? node.getFullText().replace(/```[\s\S]*?```/g,"```…```") : strip(node.getText());
    const lim = flag === "--full" || flag === "--doc" ? 100000 : 1800;
    if (t.length > lim) t = t.slice(0, lim) + " …[trunc]";
    console.log(t);
  }
}
