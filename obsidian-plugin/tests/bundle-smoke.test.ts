/**
 * The built main.js, loaded the way Obsidian loads it (a CommonJS wrapper with
 * its own require), with the stand-in obsidian module and a fake execFile as
 * child_process: onload registers the view, commands, settings tab, status
 * bar item and events; the view renders; commands reach the CLI.
 * `npm test` builds main.js first.
 */

import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeEach, describe, expect, it } from "vitest";
import type { ExecFileFn } from "../src/cli";
import * as obsidian from "./__mocks__/obsidian";
import { createFakeApp, type FakeApp } from "./fakes";
import { loadBundle, type PluginClass } from "./load-bundle";
import { SAMPLE_FILES } from "./sample-vault";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const MAIN = join(root, "main.js");
const CONTRACT = join(root, "..", "contract");
const manifest = JSON.parse(readFileSync(join(root, "manifest.json"), "utf8")) as { id: string };

type LoadedPlugin = obsidian.Plugin & {
	settings: Record<string, unknown>;
	onload(): Promise<void>;
};

interface Engine {
	calls: string[][];
	fail: string | null;
}

/** main.js with the stand-in obsidian module, and a fake execFile answering from the contract files. */
function loadPlugin(engine: Engine): PluginClass<LoadedPlugin> {
	const execFile: ExecFileFn = (_file, args, _options, callback) => {
		engine.calls.push(args);
		const command = args[3] === "show" ? "read" : (args[3] ?? "");
		queueMicrotask(() => engine.fail
			? callback(Object.assign(new Error("exit 1"), { code: 1 }), "", `error: ${engine.fail}\n`)
			: callback(null, readFileSync(join(CONTRACT, `${command}.json`), "utf8"), ""));
	};
	const required: string[] = [];
	const plugin = loadBundle<LoadedPlugin>(MAIN, (id) => {
		required.push(id);
		if (id === "obsidian") return obsidian;
		if (id === "child_process") return { execFile };
		throw new Error(`main.js required an unexpected module: ${id}`);
	});
	// Node's modules are loaded lazily, on the first CLI call.
	expect([...new Set(required)]).toEqual(["obsidian"]);
	return plugin;
}

async function flush(): Promise<void> {
	for (let i = 0; i < 10; i++) await Promise.resolve();
	await new Promise((resolve) => window.setTimeout(resolve, 0));
}

describe("the built bundle", () => {
	let fake: FakeApp;
	let engine: Engine;
	let plugin: LoadedPlugin;

	beforeEach(async () => {
		obsidian.resetMock__();
		document.body.replaceChildren();
		fake = createFakeApp(SAMPLE_FILES);
		engine = { calls: [], fail: null };
		const Plugin = loadPlugin(engine);
		plugin = new Plugin(fake.app, manifest);
		await plugin.onload();
	});

	it("registers the panel, the commands, the settings tab, the ribbon icon and the status bar item", () => {
		expect([...plugin.views__.keys()]).toEqual(["memvault-memories"]);
		expect(plugin.commands__.map((c) => c.id)).toEqual([
			"open-memory-panel", "show-context-manifest", "search-memories", "mark-outcome-used-successfully",
			"mark-outcome-corrected", "mark-outcome", "forget-memory",
		]);
		expect(plugin.commands__.map((c) => c.name)).toContain("Mark memory outcome: used successfully");
		expect(plugin.settingTabs__).toHaveLength(1);
		expect(plugin.ribbonIcons__.map((r) => r.title)).toEqual(["Open memory panel"]);
		expect(plugin.statusBarItems__).toHaveLength(1);
		expect(plugin.statusBarItems__[0]?.textContent).toBe("memvault: ...");
		expect(plugin.settings).toMatchObject({ transport: "auto", cliPath: "memvault", timeoutSeconds: 30 });
	});

	it("registers its events, DOM events and interval, and removes them on unload", () => {
		expect(fake.workspace.listenerCount__("file-menu")).toBe(1);
		expect(plugin.intervals__).toHaveLength(1);
		expect(plugin.domEvents__.map((d) => d.type)).toEqual(["click"]);
		expect(fake.workspace.layoutReady).toHaveLength(1);
		plugin.load();
		plugin.unload();
		expect(fake.workspace.listenerCount__("file-menu")).toBe(0);
	});

	it("shows index freshness and hot-tier use after layout, through the CLI when no server runs", async () => {
		for (const ready of fake.workspace.layoutReady) ready();
		await flush();
		expect(engine.calls).toEqual([["--vault", "/home/you/vault", "--json", "status"]]);
		const status = plugin.statusBarItems__[0];
		expect(status?.textContent).toBe("memvault: index current · hot 5%");
		expect(status?.getAttribute("aria-label")).toContain("Via the memvault CLI (memvault)");
		engine.fail = "no vault at /home/you/vault";
		status?.click();
		await flush();
		expect(status?.textContent).toBe("memvault: engine unavailable");
		expect(status?.getAttribute("aria-label")).toBe("error: no vault at /home/you/vault");
	});

	it("offers outcome and forget on a memory's file menu, and nothing on other notes", () => {
		const menu = new obsidian.Menu();
		const memoryFile = fake.vault.getFileByPath("memories/global/review-checklist.md");
		fake.workspace.trigger("file-menu", menu, memoryFile, "file-explorer");
		expect(menu.items__.map((i) => i.title__)).toEqual(["Mark memory outcome...", "Forget memory"]);
		const other = new obsidian.Menu();
		fake.workspace.trigger("file-menu", other, fake.vault.getFileByPath("notes/meeting.md"), "file-explorer");
		expect(other.items__).toEqual([]);
	});

	it("enables outcome commands only on a memory, and reports the engine's one-line result", async () => {
		const used = plugin.commands__.find((c) => c.id === "mark-outcome-used-successfully");
		fake.open("notes/meeting.md");
		expect(used?.checkCallback?.(true)).toBe(false);
		fake.open("memories/global/review-checklist.md");
		expect(used?.checkCallback?.(true)).toBe(true);
		expect(engine.calls).toEqual([]);
		used?.checkCallback?.(false);
		await flush();
		expect(engine.calls[0]).toEqual(["--vault", "/home/you/vault", "--json", "feedback", "--outcome", "used-successfully",
			"--", "m-01review00000000000000000d"]);
		expect(obsidian.Notice.shown__.map((n) => n.message__)).toContain(
			"recorded used-successfully for m-01m8qy9wvxrhn24hxpmwx6jr0x: proven (used successfully 1 time)");
		engine.fail = "no memory with id 'm-01review00000000000000000d'";
		plugin.commands__.find((c) => c.id === "mark-outcome-corrected")?.checkCallback?.(false);
		await flush();
		expect(obsidian.Notice.shown__.map((n) => n.message__)).toContain(
			"memvault feedback failed: no memory with id 'm-01review00000000000000000d'");
	});

	it("renders the panel into the document and opens it in the right sidebar", async () => {
		fake.open("memories/projects/github.com-example-webapp/use-pytest-fixtures-not-setup.md");
		const creator = plugin.views__.get("memvault-memories");
		const leaf = new obsidian.WorkspaceLeaf(fake.app);
		const view = creator?.(leaf) as obsidian.ItemView;
		expect(view.getViewType()).toBe("memvault-memories");
		expect(view.getDisplayText()).toBe("Memories");
		expect(view.getIcon()).toBe("brain");
		document.body.appendChild(view.containerEl);
		view.load();
		await view.onOpen();
		const titles = [...document.querySelectorAll(".memvault-panel .memvault-row-title")].map((el) => el.textContent);
		expect(titles.slice(0, 3)).toEqual(["Who I work with", "Keep answers short", "Run the tests before proposing a commit"]);
		expect(document.querySelectorAll(".memvault-panel .memvault-badge.memvault-trust-external")).toHaveLength(1);
		expect(document.querySelector(".memvault-project")?.textContent).toBe("Project: github.com/example/webapp");

		await plugin.commands__.find((c) => c.id === "open-memory-panel")?.callback?.();
		await flush();
		expect(fake.workspace.rightLeaf.viewStates__).toEqual([{ type: "memvault-memories", active: true }]);
		expect(fake.workspace.revealed).toEqual([fake.workspace.rightLeaf]);
	});

	it("displays a settings tab whose changes are saved", async () => {
		const tab = plugin.settingTabs__[0];
		tab?.display();
		const names = [...(tab?.containerEl.querySelectorAll(".setting-item-name") ?? [])].map((el) => el.textContent);
		expect(names).toEqual(expect.arrayContaining(["Transport", "Command line path", "Timeout in seconds", "Show superseded memories"]));
		const input = [...(tab?.containerEl.querySelectorAll(".setting-item") ?? [])]
			.find((el) => el.querySelector(".setting-item-name")?.textContent === "Command line path")
			?.querySelector("input");
		if (!input) throw new Error("no CLI path input");
		input.value = "/opt/memvault/bin/memvault";
		input.dispatchEvent(new Event("input"));
		await flush();
		expect(plugin.data__).toMatchObject({ cliPath: "/opt/memvault/bin/memvault" });
	});
});
