/**
 * The memories in the vault and the scope of the open note, read from
 * Obsidian's metadata cache only (no engine, so the panel works while the
 * engine is down and updates as soon as a file changes).
 */

import { TFile, type App, type PaneType } from "obsidian";
import { toMemoryEntry, type MemoryEntry } from "./memory";
import { guessProject, type ProjectGuess } from "./panel";

export function memoryOfFile(app: App, file: TFile | null): MemoryEntry | null {
	if (!file || file.extension !== "md") return null;
	return toMemoryEntry(file.path, app.metadataCache.getFileCache(file)?.frontmatter);
}

/** Every memory file in the vault (trash, journal and derived state skipped). */
export function collectMemories(app: App): MemoryEntry[] {
	const out: MemoryEntry[] = [];
	for (const file of app.vault.getMarkdownFiles()) {
		const entry = memoryOfFile(app, file);
		if (entry) out.push(entry);
	}
	return out;
}

export interface NoteScope extends ProjectGuess {
	file: TFile | null;
	/** The open note when it is a memory. */
	memory: MemoryEntry | null;
	entries: MemoryEntry[];
}

/** The open note, whether it is a memory, and the project it belongs to. */
export function currentScope(app: App, file: TFile | null = app.workspace.getActiveFile()): NoteScope {
	const entries = collectMemories(app);
	const memory = memoryOfFile(app, file);
	return { ...guessProject(file?.path ?? null, memory, entries), file, memory, entries };
}

/** The open note when it is a memory the engine can act on (a TFile with a memvault id). */
export function activeMemory(app: App): { file: TFile; memory: MemoryEntry } | null {
	const file = app.workspace.getActiveFile();
	const memory = memoryOfFile(app, file);
	return file instanceof TFile && memory ? { file, memory } : null;
}

export async function openPath(app: App, path: string, newLeaf: PaneType | boolean = false): Promise<boolean> {
	const file = app.vault.getFileByPath(path);
	if (!file) return false;
	await app.workspace.getLeaf(newLeaf).openFile(file);
	return true;
}
