/**
 * Render the built plugin's side panel with sample memories into a static
 * HTML page: main.js is loaded as Obsidian loads it (tests/load-bundle.ts),
 * with the stand-in obsidian module on a happy-dom document, the real
 * styles.css, and a few of Obsidian's CSS variables (default dark theme).
 * tools/render-panel.mjs bundles and runs this; obsidian-plugin/tools/screenshot_plugin.sh
 * screenshots the page with headless Chromium.
 */

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Window } from "happy-dom";
import type { ExecFileFn } from "../src/cli";

/** The handful of Obsidian variables styles.css uses, with the default dark theme's values. */
const OBSIDIAN_VARIABLES = `
body {
	--background-primary: #1e1e1e;
	--background-secondary: #262626;
	--background-secondary-alt: #2a2a2a;
	--background-modifier-border: #363636;
	--background-modifier-hover: rgba(255, 255, 255, 0.075);
	--background-modifier-active-hover: rgba(138, 92, 245, 0.15);
	--text-normal: #dadada;
	--text-muted: #b3b3b3;
	--text-faint: #777777;
	--text-warning: #e0ac00;
	--interactive-accent: #8a5cf5;
	--font-interface: "Inter", -apple-system, "Segoe UI", "DejaVu Sans", sans-serif;
	--font-monospace: "JetBrains Mono", "DejaVu Sans Mono", monospace;
	--font-ui-smaller: 11.5px;
	--font-ui-small: 13px;
	--font-medium: 500;
	--font-semibold: 600;
	--size-4-1: 4px;
	--size-4-2: 8px;
	--size-4-3: 12px;
	--size-4-4: 16px;
	--radius-s: 4px;
	--radius-l: 10px;
	--cursor: pointer;
	--color-red: #fb464c; --color-red-rgb: 251, 70, 76;
	--color-orange: #e9973f; --color-orange-rgb: 233, 151, 63;
	--color-yellow: #e0de71; --color-yellow-rgb: 224, 222, 113;
	--color-green: #44cf6e; --color-green-rgb: 68, 207, 110;
	--color-cyan: #53dfdd; --color-cyan-rgb: 83, 223, 221;
	--color-blue: #027aff; --color-blue-rgb: 2, 122, 255;
	margin: 0;
	background: var(--background-secondary);
	color: var(--text-normal);
	font-family: var(--font-interface);
}
.app { display: flex; flex-direction: column; height: 100vh; }
.tab-header { display: flex; align-items: center; gap: 8px; padding: 8px 12px; font-size: 13px; color: var(--text-muted);
	border-bottom: 1px solid var(--background-modifier-border); background: var(--background-secondary-alt); }
.tab-header .icon { width: 14px; height: 14px; border-radius: 50%; border: 2px solid var(--interactive-accent); }
.tab-header .title { color: var(--text-normal); }
.leaf { flex: 1; overflow: hidden; background: var(--background-secondary); }
.view-header { display: none; }
.status-bar { display: flex; justify-content: flex-end; padding: 3px 10px; font-size: 12px; color: var(--text-muted);
	border-top: 1px solid var(--background-modifier-border); background: var(--background-secondary-alt); }
`;

const VOID = new Set(["area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"]);

function escape(text: string): string {
	return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** Serialise an element as HTML text, escaping every text node and attribute. */
function serialize(node: Node): string {
	if (node.nodeType === 3) return escape(node.textContent ?? "");
	if (node.nodeType !== 1) return "";
	const el = node as Element;
	const tag = el.tagName.toLowerCase();
	const attrs = [...el.attributes].map((a) => ` ${a.name}="${escape(a.value).replace(/"/g, "&quot;")}"`).join("");
	if (VOID.has(tag)) return `<${tag}${attrs}>`;
	return `<${tag}${attrs}>${[...el.childNodes].map(serialize).join("")}</${tag}>`;
}

interface RenderedPlugin {
	onload(): Promise<void>;
	unload(): void;
	views__: Map<string, (leaf: unknown) => { containerEl: HTMLElement; load(): void; onOpen(): Promise<void>; unload(): void }>;
	statusBarItems__: HTMLElement[];
}

/** The panel page's HTML, for the open note `openPath` of the sample vault. */
export async function renderPanelPage(pluginRoot: string, openPath: string): Promise<string> {
	const window = new Window({ url: "https://obsidian.invalid/", width: 420, height: 640 });
	Object.assign(globalThis, {
		window, document: window.document, HTMLElement: window.HTMLElement, Node: window.Node,
		Event: window.Event, KeyboardEvent: window.KeyboardEvent, MouseEvent: window.MouseEvent,
	});
	// Loaded only now: the stand-in module puts Obsidian's DOM helpers on the HTMLElement just installed.
	const obsidian = await import("../tests/__mocks__/obsidian");
	obsidian.installDomHelpers__();
	const { createFakeApp } = await import("../tests/fakes");
	const { loadBundle } = await import("../tests/load-bundle");
	const { SAMPLE_FILES } = await import("../tests/sample-vault");

	const contract = join(pluginRoot, "..", "contract");
	const execFile: ExecFileFn = (_file, args, _options, callback) => {
		const command = args[3] === "show" ? "read" : (args[3] ?? "");
		queueMicrotask(() => callback(null, readFileSync(join(contract, `${command}.json`), "utf8"), ""));
	};
	const Plugin = loadBundle<RenderedPlugin>(join(pluginRoot, "main.js"), (id) => {
		if (id === "obsidian") return obsidian;
		if (id === "child_process") return { execFile };
		throw new Error(`main.js required an unexpected module: ${id}`);
	});
	const fake = createFakeApp(SAMPLE_FILES);
	const plugin = new Plugin(fake.app, JSON.parse(readFileSync(join(pluginRoot, "manifest.json"), "utf8")));
	await plugin.onload();
	fake.open(openPath);

	const app = document.body.createDiv({ cls: "app" });
	const header = app.createDiv({ cls: "tab-header" });
	header.createSpan({ cls: "icon" });
	header.createSpan({ cls: "title", text: "Memories" });
	const leaf = app.createDiv({ cls: "leaf" });
	const view = plugin.views__.get("memvault-memories")?.(new obsidian.WorkspaceLeaf(fake.app));
	if (!view) throw new Error("main.js registered no memvault-memories view");
	leaf.appendChild(view.containerEl);
	view.load();
	await view.onOpen();
	const statusBar = app.createDiv({ cls: "status-bar" });
	const status = plugin.statusBarItems__[0];
	if (status) {
		for (const ready of fake.workspace.layoutReady) ready();
		for (let i = 0; i < 20 && status.textContent === "memvault: ..."; i++) await new Promise((r) => window.setTimeout(r, 5));
		statusBar.appendChild(status);
	}
	const css = readFileSync(join(pluginRoot, "styles.css"), "utf8");
	const html = "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>memvault panel</title>"
		+ `<style>${OBSIDIAN_VARIABLES}</style><style>${css}</style></head>`
		+ `<body class="theme-dark">${serialize(app)}</body></html>\n`;
	view.unload();
	plugin.unload();
	await window.happyDOM.close();
	return html;
}
