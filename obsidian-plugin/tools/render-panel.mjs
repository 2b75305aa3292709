// Write the side panel, rendered from the built main.js with sample memories, as a static HTML page.
// Usage: node tools/render-panel.mjs OUT.html [OPEN_NOTE_PATH]   (run npm run build first)
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import process from "node:process";
import esbuild from "esbuild";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const out = resolve(process.argv[2] ?? join(root, "tools", "out", "panel.html"));
const openPath = process.argv[3] ?? "memories/projects/github.com-example-webapp/use-pytest-fixtures-not-setup.md";
const bundle = join(root, "tools", "out", "panel-page.mjs");

await esbuild.build({
	entryPoints: [join(root, "tools", "panel-page.ts")],
	bundle: true,
	platform: "node",
	format: "esm",
	target: "node20",
	outfile: bundle,
	external: ["happy-dom", "obsidian"],
	logLevel: "warning",
});
const { renderPanelPage } = await import(pathToFileURL(bundle).href);
const html = await renderPanelPage(root, openPath);
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, html);
console.log(`wrote ${out}`);
