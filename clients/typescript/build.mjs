// Builds dist/ (`npm run build`, make ts-client; `npm pack` runs it first):
// esbuild bundles the browser script (global `Lodge`, openapi-fetch inside),
// the ES module (openapi-fetch imported: a dependency) and the Node tests;
// the type declarations come from tsc (tsconfig.build.json), beside them the
// generated src/schema.d.ts, which they import.
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { build } from "esbuild";

const common = { bundle: true, target: "es2020", logLevel: "warning", legalComments: "none" };
await Promise.all([
  build({ ...common, entryPoints: ["src/index.ts"], outfile: "dist/lodge-client.js", format: "iife",
          globalName: "Lodge", platform: "browser" }),
  build({ ...common, entryPoints: ["src/index.ts"], outfile: "dist/lodge-client.mjs", format: "esm",
          platform: "neutral", packages: "external" }),
  build({ ...common, entryPoints: ["test/*.test.ts"], outdir: "dist/test", outExtension: { ".js": ".mjs" },
          format: "esm", platform: "node", target: "node20" }),
]);
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { stdio: "inherit" });
mkdirSync("dist", { recursive: true });
copyFileSync("src/schema.d.ts", "dist/schema.d.ts");
