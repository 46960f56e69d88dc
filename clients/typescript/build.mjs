// Bundles with esbuild: the browser bundle (global `Lodge`), an ES module for
// Node, and the Node tests.  `npm run build` (make ts-client) writes dist/.
import { build } from "esbuild";

const common = { bundle: true, target: "es2020", logLevel: "warning", legalComments: "none" };
await Promise.all([
  build({ ...common, entryPoints: ["src/index.ts"], outfile: "dist/lodge-client.js", format: "iife",
          globalName: "Lodge", platform: "browser" }),
  build({ ...common, entryPoints: ["src/index.ts"], outfile: "dist/lodge-client.mjs", format: "esm",
          platform: "neutral" }),
  build({ ...common, entryPoints: ["test/play.test.ts"], outfile: "dist/test/play.test.mjs", format: "esm",
          platform: "node", target: "node20" }),
]);
