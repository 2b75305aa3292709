/**
 * Commands and the file menu: the manifest for a task, search, outcomes and
 * forget. Every engine call reports its one-line result or error in a Notice.
 */

import { Notice, TFile, type Plugin, type TAbstractFile } from "obsidian";
import { errorLine, type EngineClient } from "./client";
import { feedbackLine, forgetLine, outcomeLabel } from "./messages";
import type { MemoryEntry, Outcome } from "./memory";
import { ConfirmModal, ManifestModal, MemorySearchModal, OutcomePickerModal, TaskPromptModal } from "./modals";
import { activeMemory, currentScope, memoryOfFile, openPath } from "./scope";
import type { MemvaultSettings } from "./settings";

/** What the commands need from the plugin. */
export interface CommandHost extends Plugin {
	settings: MemvaultSettings;
	engine: EngineClient;
	activateView(): Promise<void>;
}

export const QUICK_OUTCOMES: Outcome[] = ["used-successfully", "corrected"];

/** Run one engine call; show its one-line result, or the error, in a Notice. */
export async function report<T>(action: string, call: () => Promise<T>, line: (result: T) => string): Promise<T | null> {
	try {
		const result = await call();
		new Notice(line(result));
		return result;
	} catch (error) {
		new Notice(`memvault ${action} failed: ${errorLine(error).replace(/^error:\s*/, "")}`, 8000);
		return null;
	}
}

export function markOutcome(host: CommandHost, memory: MemoryEntry, outcome: Outcome): Promise<unknown> {
	return report("feedback", () => host.engine.feedback(memory.id, outcome), feedbackLine);
}

export function pickOutcome(host: CommandHost, memory: MemoryEntry): void {
	new OutcomePickerModal(host.app, memory.title, (outcome) => void markOutcome(host, memory, outcome)).open();
}

export function confirmForget(host: CommandHost, memory: MemoryEntry): void {
	new ConfirmModal(host.app, {
		title: "Forget this memory?",
		message: `"${memory.title}" (${memory.id}) moves to the trash and is no longer delivered or found. `
			+ `Undo with: memvault rollback ${memory.id}`,
		confirmText: "Forget",
	}, () => void report("forget", () => host.engine.forget(memory.id), forgetLine)).open();
}

export function showManifest(host: CommandHost): void {
	const scope = currentScope(host.app);
	const sourcePath = scope.file?.path ?? "";
	new TaskPromptModal(host.app, {
		project: scope.project ?? "",
		path: host.settings.useNotePath ? sourcePath : "",
	}, (request) => {
		const working = new Notice("Building the context manifest...", 0);
		host.engine.context(request.task, {
			project: request.project || null,
			path: request.path || null,
			record: host.settings.recordManifests,
		}).then(
			(result) => new ManifestModal(host.app, result, sourcePath).open(),
			(error: unknown) => new Notice(`memvault context failed: ${errorLine(error).replace(/^error:\s*/, "")}`, 8000),
		).finally(() => working.hide());
	}).open();
}

export function openSearch(host: CommandHost): void {
	new MemorySearchModal(host.app, (query) => host.engine.search(query, {
		limit: host.settings.searchLimit,
		project: host.settings.searchCurrentProject ? currentScope(host.app).project : null,
	}), (path) => openPath(host.app, path)).open();
}

/** A check callback for a command on the open memory. */
function onActiveMemory(host: CommandHost, run: (memory: MemoryEntry) => void): (checking: boolean) => boolean {
	return (checking) => {
		const active = activeMemory(host.app);
		if (!active) return false;
		if (!checking) run(active.memory);
		return true;
	};
}

export function registerCommands(host: CommandHost): void {
	host.addCommand({ id: "open-memory-panel", name: "Open memory panel", callback: () => void host.activateView() });
	host.addCommand({ id: "show-context-manifest", name: "Show context manifest for a task", callback: () => showManifest(host) });
	host.addCommand({ id: "search-memories", name: "Search memories", callback: () => openSearch(host) });
	for (const outcome of QUICK_OUTCOMES) {
		host.addCommand({
			id: `mark-outcome-${outcome}`,
			name: `Mark memory outcome: ${outcomeLabel(outcome)}`,
			checkCallback: onActiveMemory(host, (memory) => void markOutcome(host, memory, outcome)),
		});
	}
	host.addCommand({
		id: "mark-outcome",
		name: "Mark memory outcome...",
		checkCallback: onActiveMemory(host, (memory) => pickOutcome(host, memory)),
	});
	host.addCommand({
		id: "forget-memory",
		name: "Forget this memory",
		checkCallback: onActiveMemory(host, (memory) => confirmForget(host, memory)),
	});
	host.registerEvent(host.app.workspace.on("file-menu", (menu, file: TAbstractFile) => {
		const memory = file instanceof TFile ? memoryOfFile(host.app, file) : null;
		if (!memory) return;
		menu.addItem((item) => item
			.setTitle("Mark memory outcome...")
			.setIcon("check-circle")
			.onClick(() => pickOutcome(host, memory)));
		menu.addItem((item) => item
			.setTitle("Forget memory")
			.setIcon("trash-2")
			.onClick(() => confirmForget(host, memory)));
	}));
}
