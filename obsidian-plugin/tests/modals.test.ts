import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { App } from "obsidian";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { decodeContext, decodeSearch, type SearchResult } from "../src/contract";
import {
	ConfirmModal, ManifestModal, MemorySearchModal, OutcomePickerModal, TaskPromptModal, debounceAsync, type TaskRequest,
} from "../src/modals";
import { MarkdownRenderer, Notice, resetMock__ } from "./__mocks__/obsidian";

const CONTRACT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "contract");
const searchResult = decodeSearch(JSON.parse(readFileSync(join(CONTRACT, "search.json"), "utf8")));
const contextResult = decodeContext(JSON.parse(readFileSync(join(CONTRACT, "context.json"), "utf8")));
const app = {} as App;

function type(input: HTMLInputElement | undefined, value: string): void {
	if (!input) throw new Error("no input");
	input.value = value;
	input.dispatchEvent(new Event("input"));
}

beforeEach(() => {
	resetMock__();
	document.body.replaceChildren();
});

afterEach(() => {
	vi.useRealTimers();
});

describe("debounced search", () => {
	it("makes one call with the last query and gives its result to every caller", async () => {
		vi.useFakeTimers();
		const calls: string[] = [];
		const search = debounceAsync((query: string) => {
			calls.push(query);
			return Promise.resolve(`result for ${query}`);
		}, 250);
		const first = search("n");
		await vi.advanceTimersByTimeAsync(100);
		const second = search("ni");
		const third = search("nightly");
		await vi.advanceTimersByTimeAsync(250);
		expect(await Promise.all([first, second, third])).toEqual(Array(3).fill("result for nightly"));
		expect(calls).toEqual(["nightly"]);
	});

	it("passes a failure to every caller", async () => {
		const search = debounceAsync(() => Promise.reject(new Error("engine down")), 1);
		await expect(Promise.all([search(1), search(2)])).rejects.toThrow("engine down");
	});
});

describe("search modal", () => {
	function modal(search: (q: string) => Promise<SearchResult>, opened: string[] = []): MemorySearchModal {
		return new MemorySearchModal(app, search, (path) => {
			opened.push(path);
			return Promise.resolve(!path.startsWith("missing/"));
		}, 0);
	}

	it("asks the engine, then shows each hit's title, badges, snippet and path", async () => {
		const queries: string[] = [];
		const m = modal((q) => {
			queries.push(q);
			return Promise.resolve(searchResult);
		});
		expect(await m.getSuggestions("  ")).toEqual([]);
		const suggestions = await m.getSuggestions(" nightly builds ");
		expect(queries).toEqual(["nightly builds"]);
		expect(suggestions.map((s) => s.kind)).toEqual(["hit", "hit", "hit", "revivable"]);
		const el = document.body.createDiv();
		const first = suggestions[0];
		if (!first) throw new Error("no suggestion");
		m.renderSuggestion(first, el);
		expect(el.querySelector(".memvault-row-title")?.textContent).toBe("Staging runs on Postgres 16");
		expect([...el.querySelectorAll(".memvault-badge")].map((b) => b.className)).toEqual([
			"memvault-badge memvault-trust-learned", "memvault-badge memvault-lifecycle-proven", "memvault-badge memvault-tier-cold",
		]);
		expect(el.querySelector(".memvault-summary")?.textContent).toContain("Postgres 16");
		expect(el.querySelector(".memvault-path")?.textContent).toBe(first.hit.path);
		const trashed = document.body.createDiv();
		const last = suggestions[3];
		if (!last) throw new Error("no revivable suggestion");
		m.renderSuggestion(last, trashed);
		expect(trashed.querySelector(".memvault-trashed")?.textContent).toBe("in the trash");
	});

	it("opens the chosen memory by its vault path, and says when it is not there", async () => {
		const opened: string[] = [];
		const m = modal(() => Promise.resolve(searchResult), opened);
		const [hit] = await m.getSuggestions("q");
		if (!hit) throw new Error("no suggestion");
		m.onChooseSuggestion(hit);
		m.onChooseSuggestion({ kind: "hit", hit: { ...searchResult.hits[0]!, path: "missing/x.md" } });
		await Promise.resolve();
		await Promise.resolve();
		expect(opened).toEqual([hit.hit.path, "missing/x.md"]);
		expect(Notice.shown__.map((n) => n.message__)).toEqual([
			"missing/x.md is not in the vault (the index may be stale: run memvault sync).",
		]);
	});

	it("shows the engine's error as the empty state", async () => {
		const m = modal(() => Promise.reject(new Error("error: no vault at /v")));
		expect(await m.getSuggestions("q")).toEqual([]);
		expect(m.emptyStateText).toBe("Search failed: error: no vault at /v");
	});
});

describe("task prompt and manifest", () => {
	it("submits the typed task with the prefilled project and path", () => {
		const submitted: TaskRequest[] = [];
		const prompt = new TaskPromptModal(app, { project: "github.com/example/webapp", path: "notes/a.md" }, (r) => submitted.push(r));
		prompt.open();
		const inputs = [...prompt.contentEl.querySelectorAll("input")];
		expect(inputs.map((i) => i.value)).toEqual(["", "github.com/example/webapp", "notes/a.md"]);
		prompt.contentEl.querySelector("button")?.click();
		expect(submitted).toEqual([]);
		expect(Notice.shown__.map((n) => n.message__)).toEqual(["Type the task first."]);
		type(inputs[0], "  add a test  ");
		type(inputs[2], "");
		inputs[0]?.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
		expect(submitted).toEqual([{ task: "add a test", project: "github.com/example/webapp", path: "" }]);
		expect(document.body.contains(prompt.containerEl)).toBe(false);
	});

	it("renders the manifest's markdown without its wrapper, with the summary line", () => {
		const modal = new ManifestModal(app, contextResult, "notes/a.md");
		modal.open();
		expect(modal.titleEl.textContent).toBe("Context manifest");
		expect(modal.contentEl.querySelector(".memvault-manifest-summary")?.textContent)
			.toBe("3 resident, 4 in the manifest, 2375 of 6000 characters; application e-01m8qy9y5w48m6jfwb9qwtzrms");
		expect(MarkdownRenderer.rendered__).toHaveLength(1);
		const rendered = MarkdownRenderer.rendered__[0];
		expect(rendered?.sourcePath).toBe("notes/a.md");
		expect(rendered?.markdown.startsWith("Task: add a test")).toBe(true);
		expect(rendered?.markdown).not.toContain("memory-context");
		modal.close();
		expect(modal.contentEl.childElementCount).toBe(0);
	});
});

describe("outcome picker and confirm", () => {
	it("filters the five outcomes and returns the chosen one", () => {
		const chosen: string[] = [];
		const picker = new OutcomePickerModal(app, "A memory", (o) => chosen.push(o));
		expect(picker.getSuggestions("")).toHaveLength(5);
		expect(picker.getSuggestions("fail")).toEqual(["contributed-to-failure"]);
		expect(picker.getSuggestions("used succ")).toEqual(["used-successfully"]);
		picker.onChooseSuggestion("ignored");
		expect(chosen).toEqual(["ignored"]);
	});

	it("runs the action only on confirm", () => {
		let runs = 0;
		const cancel = new ConfirmModal(app, { title: "Forget?", message: "m", confirmText: "Forget" }, () => runs++);
		cancel.open();
		const [cancelButton, forgetButton] = [...cancel.contentEl.querySelectorAll("button")];
		expect(forgetButton?.classList.contains("mod-warning")).toBe(true);
		cancelButton?.click();
		expect(runs).toBe(0);
		const confirm = new ConfirmModal(app, { title: "Forget?", message: "m", confirmText: "Forget" }, () => runs++);
		confirm.open();
		[...confirm.contentEl.querySelectorAll("button")][1]?.click();
		expect(runs).toBe(1);
	});
});
