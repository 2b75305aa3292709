/**
 * A fake Obsidian App over an in-memory vault: files with frontmatter, a
 * metadata cache, a workspace with leaves and events, a disk adapter.
 */

import type { App } from "obsidian";
import { Events, FileSystemAdapter, TFile, WorkspaceLeaf, makeFile__ } from "./__mocks__/obsidian";

export class FakeVault extends Events {
	files = new Map<string, TFile>();

	constructor(public adapter: FileSystemAdapter) {
		super();
	}

	getMarkdownFiles(): TFile[] {
		return [...this.files.values()].filter((file) => file.extension === "md");
	}

	getFileByPath(path: string): TFile | null {
		return this.files.get(path) ?? null;
	}
}

export class FakeMetadataCache extends Events {
	frontmatter = new Map<string, Record<string, unknown> | null>();

	getFileCache(file: TFile): { frontmatter?: Record<string, unknown> } | null {
		if (!this.frontmatter.has(file.path)) return null;
		const fm = this.frontmatter.get(file.path);
		return fm ? { frontmatter: fm } : {};
	}
}

export class FakeWorkspace extends Events {
	active: TFile | null = null;
	mainLeaf: WorkspaceLeaf;
	rightLeaf: WorkspaceLeaf;
	leaves: WorkspaceLeaf[] = [];
	revealed: WorkspaceLeaf[] = [];
	layoutReady: (() => unknown)[] = [];

	constructor(app: unknown) {
		super();
		this.mainLeaf = new WorkspaceLeaf(app);
		this.rightLeaf = new WorkspaceLeaf(app);
	}

	getActiveFile(): TFile | null {
		return this.active;
	}

	getLeavesOfType(type: string): WorkspaceLeaf[] {
		return this.leaves.filter((leaf) => leaf.view?.getViewType() === type);
	}

	getRightLeaf(): WorkspaceLeaf {
		return this.rightLeaf;
	}

	getLeaf(): WorkspaceLeaf {
		return this.mainLeaf;
	}

	revealLeaf(leaf: WorkspaceLeaf): Promise<void> {
		this.revealed.push(leaf);
		return Promise.resolve();
	}

	onLayoutReady(callback: () => unknown): void {
		this.layoutReady.push(callback);
	}
}

export interface FakeApp {
	app: App;
	vault: FakeVault;
	metadataCache: FakeMetadataCache;
	workspace: FakeWorkspace;
	adapter: FileSystemAdapter;
	/** Make `path` the open note and fire the workspace's events. */
	open(path: string | null): void;
	/** Change (or add) a file's frontmatter and fire metadataCache 'changed'. */
	setFrontmatter(path: string, frontmatter: Record<string, unknown> | null): void;
}

export function createFakeApp(files: Record<string, Record<string, unknown> | null>, basePath = "/home/you/vault"): FakeApp {
	const adapter = new FileSystemAdapter(basePath);
	const vault = new FakeVault(adapter);
	const metadataCache = new FakeMetadataCache();
	const app = { vault, metadataCache } as unknown as { workspace: FakeWorkspace };
	const workspace = new FakeWorkspace(app);
	app.workspace = workspace;
	const setFrontmatter = (path: string, frontmatter: Record<string, unknown> | null): void => {
		if (!vault.files.has(path)) vault.files.set(path, makeFile__(path));
		metadataCache.frontmatter.set(path, frontmatter);
		metadataCache.trigger("changed", vault.files.get(path));
	};
	for (const [path, frontmatter] of Object.entries(files)) {
		vault.files.set(path, makeFile__(path));
		metadataCache.frontmatter.set(path, frontmatter);
	}
	return {
		app: app as unknown as App,
		vault,
		metadataCache,
		workspace,
		adapter,
		open(path) {
			workspace.active = path === null ? null : (vault.files.get(path) ?? null);
			workspace.trigger("file-open", workspace.active);
			workspace.trigger("active-leaf-change", workspace.mainLeaf);
		},
		setFrontmatter,
	};
}
