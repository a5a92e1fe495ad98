// Build the editor, math and workspace bundles into frontend/static/frontend/ (committed,
// so running the site needs no Node). Run with `make editor`.
import { build } from "esbuild";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "..", "static", "frontend");
const common = { bundle: true, minify: true, format: "iife", target: ["es2020"], legalComments: "linked", logLevel: "info" };

await build({ ...common, entryPoints: [join(here, "editor.js")], outfile: join(out, "editor.bundle.js") });
await build({ ...common, entryPoints: [join(here, "math.js")], outfile: join(out, "math.bundle.js") });
// The workspace page's own code, ES modules under workspace/.
await build({ ...common, entryPoints: [join(here, "workspace", "main.js")], outfile: join(out, "workspace.bundle.js") });

// KaTeX's stylesheet and fonts. Only woff2 is kept (every browser we support
// reads it); the stylesheet is rewritten to match so that collectstatic's
// manifest storage finds every file the CSS names.
const katexDist = join(here, "node_modules", "katex", "dist");
const katexOut = join(out, "katex");
rmSync(katexOut, { recursive: true, force: true });
mkdirSync(join(katexOut, "fonts"), { recursive: true });
const css = readFileSync(join(katexDist, "katex.min.css"), "utf8")
  .replace(/,url\(fonts\/[^)]+\.woff\) format\("woff"\)/g, "")
  .replace(/,url\(fonts\/[^)]+\.ttf\) format\("truetype"\)/g, "");
if (/\.(woff|ttf)\)/.test(css)) throw new Error("katex.min.css still names woff/ttf fonts");
writeFileSync(join(katexOut, "katex.min.css"), css);
for (const name of readdirSync(join(katexDist, "fonts"))) {
  if (name.endsWith(".woff2")) copyFileSync(join(katexDist, "fonts", name), join(katexOut, "fonts", name));
}
copyFileSync(join(here, "node_modules", "katex", "LICENSE"), join(katexOut, "LICENSE"));
