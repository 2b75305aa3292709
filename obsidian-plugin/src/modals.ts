/**
 * The plugin's dialogs: the task prompt and the manifest it produces, the
 * search box on the engine's hybrid search, the outcome picker and a confirm
 * dialog. Each Modal owns a Component, so its listeners and rendered markdown
 * are released when it closes.
 */

import { Component, MarkdownRenderer, Modal, Notice, Setting, SuggestModal, type App } from "obsidian";
import type { ContextResult, RevivableHit, SearchHit, SearchResult } from "./contract";
import { errorLine } from "./client";
import { manifestForDisplay, manifestSummary, outcomeLabel } from "./messages";
import { OUTCOMES, type Outcome } from "./memory";
import { renderBadges } from "./view";

export const SEARCH_DEBOUNCE_MS = 250;

/**
 * Debounce an async call: callers within `waitMs` of each other share one call
 * with the last argument, and all of them get its result.
 */
export function debounceAsync<A, R>(call: (arg: A) => Promise<R>, waitMs: number): (arg: A) => Promise<R> {
	let timer: number | undefined;
	let waiting: { resolve: (value: R) => void; reject: (error: unknown) => void }[] = [];
	return (arg: A) => new Promise<R>((resolve, reject) => {
		window.clearTimeout(timer);
		waiting.push({ resolve, reject });
		timer = window.setTimeout(() => {
			const batch = waiting;
			waiting = [];
			call(arg).then(
				(value) => batch.forEach((w) => w.resolve(value)),
				(error: unknown) => batch.forEach((w) => w.reject(error)),
			);
		}, waitMs);
	});
}

/** A Modal whose listeners and rendered children live in a Component released on close. */
class ComponentModal extends Modal {
	protected readonly component = new Component();

	override onOpen(): void {
		this.component.load();
	}

	override onClose(): void {
		this.component.unload();
		this.contentEl.empty();
	}
}

export interface TaskRequest {
	task: string;
	project: string;
	path: string;
}

/** Asks for the task (and lets the project and path be changed) before a manifest is built. */
export class TaskPromptModal extends ComponentModal {
	private readonly request: TaskRequest;
	private taskInput: HTMLInputElement | null = null;

	constructor(app: App, initial: Omit<TaskRequest, "task">, private readonly submit: (request: TaskRequest) => void) {
		super(app);
		this.request = { task: "", ...initial };
	}

	override onOpen(): void {
		super.onOpen();
		this.setTitle("Show context manifest for a task");
		const { contentEl, request } = this;
		new Setting(contentEl)
			.setName("Task")
			.setDesc("What an agent is about to do, in a sentence.")
			.addText((text) => {
				this.taskInput = text.inputEl;
				text.setPlaceholder("Add a test for the signup email").onChange((value) => { request.task = value; });
			});
		new Setting(contentEl)
			.setName("Project")
			.setDesc("Project key; empty: global memories only.")
			.addText((text) => text.setValue(request.project).onChange((value) => { request.project = value; }));
		new Setting(contentEl)
			.setName("Path")
			.setDesc("Matched against the memories' path selectors; empty: no path filter.")
			.addText((text) => text.setValue(request.path).onChange((value) => { request.path = value; }));
		new Setting(contentEl).addButton((button) => button
			.setButtonText("Show manifest")
			.setCta()
			.onClick(() => this.done()));
		this.component.registerDomEvent(contentEl, "keydown", (evt: KeyboardEvent) => {
			if (evt.key === "Enter" && !evt.isComposing) {
				evt.preventDefault();
				this.done();
			}
		});
		this.taskInput?.focus();
	}

	private done(): void {
		const task = this.request.task.trim();
		if (!task) {
			new Notice("Type the task first.");
			return;
		}
		this.close();
		this.submit({ task, project: this.request.project.trim(), path: this.request.path.trim() });
	}
}

/** The manifest as markdown, with what was delivered and a button to copy it for a prompt. */
export class ManifestModal extends ComponentModal {
	constructor(app: App, private readonly result: ContextResult, private readonly sourcePath: string) {
		super(app);
	}

	override onOpen(): void {
		super.onOpen();
		const { contentEl, result } = this;
		this.setTitle("Context manifest");
		this.modalEl.addClass("memvault-manifest-modal");
		contentEl.createDiv({ cls: "memvault-manifest-summary", text: manifestSummary(result) });
		if (result.note) contentEl.createDiv({ cls: "memvault-manifest-note", text: result.note });
		const body = contentEl.createDiv({ cls: "memvault-manifest markdown-rendered" });
		if (result.markdown.trim()) {
			void MarkdownRenderer.render(this.app, manifestForDisplay(result.markdown), body, this.sourcePath, this.component);
		} else {
			body.createDiv({ cls: "memvault-empty", text: "No memories apply to this task." });
		}
		new Setting(contentEl).addButton((button) => button
			.setButtonText("Copy as Markdown")
			.onClick(() => {
				navigator.clipboard.writeText(result.markdown).then(
					() => new Notice("Manifest copied."),
					(error: unknown) => new Notice(`Could not copy: ${errorLine(error)}`),
				);
			}));
	}
}

export type SearchSuggestion = { kind: "hit"; hit: SearchHit } | { kind: "revivable"; hit: RevivableHit };

export function suggestionsOf(result: SearchResult): SearchSuggestion[] {
	return [
		...result.hits.map((hit): SearchSuggestion => ({ kind: "hit", hit })),
		...result.revivable.map((hit): SearchSuggestion => ({ kind: "revivable", hit })),
	];
}

/** A search box on the engine's hybrid search; choosing a hit opens its file. */
export class MemorySearchModal extends SuggestModal<SearchSuggestion> {
	private readonly searchNow: (query: string) => Promise<SearchSuggestion[]>;

	constructor(
		app: App,
		search: (query: string) => Promise<SearchResult>,
		private readonly openFile: (path: string) => Promise<boolean>,
		waitMs = SEARCH_DEBOUNCE_MS,
	) {
		super(app);
		this.setPlaceholder("Search memories by meaning and by words");
		this.emptyStateText = "Type to search memories.";
		this.searchNow = debounceAsync(async (query: string) => {
			try {
				const result = await search(query);
				this.emptyStateText = result.notice ?? "No memories match.";
				return suggestionsOf(result);
			} catch (error) {
				this.emptyStateText = `Search failed: ${errorLine(error)}`;
				return [];
			}
		}, waitMs);
	}

	getSuggestions(query: string): Promise<SearchSuggestion[]> {
		if (!query.trim()) {
			this.emptyStateText = "Type to search memories.";
			return Promise.resolve([]);
		}
		return this.searchNow(query.trim());
	}

	renderSuggestion(item: SearchSuggestion, el: HTMLElement): void {
		el.addClass("memvault-suggestion");
		el.createDiv({ cls: "memvault-row-title", text: item.hit.title });
		if (item.kind === "hit") {
			renderBadges(el, item.hit);
			const detail = item.hit.snippet || item.hit.summary;
			if (detail) el.createDiv({ cls: "memvault-summary", text: detail });
		} else {
			el.addClass("is-dimmed");
			el.createDiv({ cls: "memvault-badges" })
				.createSpan({ cls: "memvault-badge memvault-trashed", text: "in the trash" });
			el.createDiv({ cls: "memvault-summary", text: `Matches strongly; restore with: ${item.hit.restore}` });
		}
		el.createDiv({ cls: "memvault-path", text: item.hit.path });
	}

	onChooseSuggestion(item: SearchSuggestion): void {
		if (item.kind === "revivable") {
			new Notice(`${item.hit.title} is in the trash. Restore it with: ${item.hit.restore}`);
			return;
		}
		const path = item.hit.path;
		void this.openFile(path).then((opened) => {
			if (!opened) new Notice(`${path} is not in the vault (the index may be stale: run memvault sync).`);
		});
	}
}

const OUTCOME_HELP: Record<Outcome, string> = {
	"used-successfully": "It helped; a trial memory becomes proven.",
	ignored: "It was delivered but did not matter.",
	overridden: "The user chose otherwise this time.",
	corrected: "It was wrong; an inferred memory is superseded.",
	"contributed-to-failure": "Following it caused a failure; an inferred memory is superseded.",
};

/** Pick one of the five outcomes. */
export class OutcomePickerModal extends SuggestModal<Outcome> {
	constructor(app: App, title: string, private readonly choose: (outcome: Outcome) => void) {
		super(app);
		this.setPlaceholder(`How did "${title}" work out?`);
	}

	getSuggestions(query: string): Outcome[] {
		const words = query.toLowerCase().trim();
		return OUTCOMES.filter((outcome) => outcomeLabel(outcome).includes(words) || outcome.includes(words));
	}

	renderSuggestion(outcome: Outcome, el: HTMLElement): void {
		el.createDiv({ text: outcomeLabel(outcome) });
		el.createDiv({ cls: "memvault-summary", text: OUTCOME_HELP[outcome] });
	}

	onChooseSuggestion(outcome: Outcome): void {
		this.choose(outcome);
	}
}

export interface ConfirmOptions {
	title: string;
	message: string;
	confirmText: string;
}

/** Ask before an action; only the confirm button runs it. */
export class ConfirmModal extends ComponentModal {
	constructor(app: App, private readonly options: ConfirmOptions, private readonly confirm: () => void) {
		super(app);
	}

	override onOpen(): void {
		super.onOpen();
		this.setTitle(this.options.title);
		this.contentEl.createEl("p", { text: this.options.message });
		new Setting(this.contentEl)
			.addButton((button) => button.setButtonText("Cancel").onClick(() => this.close()))
			.addButton((button) => {
				// mod-warning is what setWarning() set before 1.13 deprecated it for setDestructive().
				button.setButtonText(this.options.confirmText).onClick(() => {
					this.close();
					this.confirm();
				});
				button.buttonEl.addClass("mod-warning");
			});
	}
}
