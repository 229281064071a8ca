// Evaluates the CEL expressions of rendered matchConditions against Pod
// objects, with npm's @marcbachmann/cel-js (a cel-spec implementation in
// JavaScript). Kubernetes evaluates them with cel-go, which neither npm nor
// Debian ships: this is the nearest real CEL the test can install. Both
// treat a missing map key as an error and has() as presence, which is what
// the expressions guard against.
//
//   node cel_eval.mjs NODE_MODULES CASES.json
//
// CASES.json: [{"source": "...", "expression": "...", "pods": {"name":
// {...Pod...}, ...}}, ...]. Prints [{"source", "pod", "result"}, ...] as
// JSON, result true, false, or "error: <message>" (an evaluation error, or a
// result that is not a bool, as the API server would report it). Exits 2 when
// an expression does not parse.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import path from "node:path";

const [modules, input] = process.argv.slice(2);
if (!modules || !input) {
  console.error("usage: node cel_eval.mjs NODE_MODULES CASES.json");
  process.exit(2);
}
const cel = await import(pathToFileURL(
  path.join(modules, "@marcbachmann", "cel-js", "lib", "index.js")).href);

const out = [];
for (const c of JSON.parse(readFileSync(input, "utf8"))) {
  let program;
  try {
    program = cel.parse(c.expression);
  } catch (e) {
    console.error(`${c.source}: the expression does not parse: ${e.message}`);
    process.exit(2);
  }
  for (const [pod, object] of Object.entries(c.pods)) {
    let result;
    try {
      result = program({ object });
      if (typeof result !== "boolean") {
        result = `error: the expression gave ${typeof result}, not a bool`;
      }
    } catch (e) {
      result = "error: " + e.message.split("\n")[0];
    }
    out.push({ source: c.source, pod, result });
  }
}
console.log(JSON.stringify(out));
