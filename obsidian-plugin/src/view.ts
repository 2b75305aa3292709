/**
 * The side panel: the memories that apply to the open note's project, from
 * frontmatter only, refreshed (debounced) when the open note or any metadata
 * changes. Rows are built with createEl/createDiv/setText; one delegated click
 * and key listener per panel opens the memory file.
 */

import { ItemView, Keymap, debounce, type WorkspaceLeaf } from "obsidian";
import { badgesFor, type BadgeFields } from "./memory";
import { buildPanel, type PanelGroup, type PanelModel } from "./panel";
import { currentScope, openPath } from "./scope";

export const VIEW_TYPE = "memvault-memories";
export const REFRESH_MS = 250;

/** What the panel needs from the plugin. */
export interface PanelHost {
	settings: { showSuperseded: boolean };
}

export function renderBadges(parent: HTMLElement, memory: BadgeFields & { problems?: string[] }): HTMLElement {
	const badges = parent.createDiv({ cls: "memvault-badges" });
	for (const badge of badgesFor(memory)) {
		badges.createSpan({ cls: badge.cls, text: badge.label, attr: { "aria-label": badge.title } });
	}
	if (memory.problems && memory.problems.length > 0) {
		badges.createSpan({
			cls: "memvault-badge memvault-invalid", text: "invalid",
			attr: { "aria-label": `The engine skips this file: ${memory.problems.join("; ")}` },
		});
	}
	return badges;
}

export class MemoryPanelView extends ItemView {
	/** The model last rendered (for tests and the screenshot tool). */
	model: PanelModel | null = null;

	constructor(leaf: WorkspaceLeaf, private readonly host: PanelHost) {
		super(leaf);
		this.icon = "brain";
	}

	getViewType(): string {
		return VIEW_TYPE;
	}

	getDisplayText(): string {
		return "Memories";
	}

	override async onOpen(): Promise<void> {
		this.contentEl.addClass("memvault-panel");
		const refresh = debounce(() => this.render(), REFRESH_MS, true);
		this.register(() => refresh.cancel());
		this.registerEvent(this.app.workspace.on("active-leaf-change", () => refresh()));
		this.registerEvent(this.app.workspace.on("file-open", () => refresh()));
		this.registerEvent(this.app.metadataCache.on("changed", () => refresh()));
		this.registerEvent(this.app.metadataCache.on("resolved", () => refresh()));
		this.registerDomEvent(this.contentEl, "click", (evt) => this.openRow(evt));
		this.registerDomEvent(this.contentEl, "keydown", (evt) => {
			if (evt.key === "Enter" || evt.key === " ") this.openRow(evt);
		});
		this.render();
	}

	override async onClose(): Promise<void> {
		this.contentEl.empty();
	}

	/** Rebuild the panel from the metadata cache (cheap: no file is read). */
	render(): void {
		const scope = currentScope(this.app);
		const model = buildPanel(scope.entries, scope, this.host.settings.showSuperseded);
		this.model = model;
		const root = this.contentEl;
		root.empty();
		const header = root.createDiv({ cls: "memvault-panel-header" });
		header.createDiv({
			cls: "memvault-project",
			text: model.project ? `Project: ${model.project}` : "Global memories",
		});
		header.createDiv({ cls: "memvault-reason", text: model.reason });
		if (model.total === 0) {
			root.createDiv({ cls: "memvault-empty", text: "No memories apply here." });
		}
		for (const group of model.groups) this.renderGroup(root, group, scope.file?.path ?? null);
		if (model.hiddenSuperseded > 0) {
			root.createDiv({
				cls: "memvault-footer",
				text: `${model.hiddenSuperseded} superseded ${model.hiddenSuperseded === 1 ? "memory" : "memories"} hidden `
					+ "(see the plugin's settings).",
			});
		}
	}

	private renderGroup(root: HTMLElement, group: PanelGroup, activePath: string | null): void {
		const section = root.createDiv({ cls: `memvault-group memvault-group-${group.key}` });
		if (group.dimmed) section.addClass("is-dimmed");
		const title = section.createDiv({ cls: "memvault-group-title", attr: { "aria-label": group.hint } });
		title.createSpan({ text: group.label });
		title.createSpan({ cls: "memvault-count", text: String(group.entries.length) });
		for (const entry of group.entries) {
			const row = section.createDiv({
				cls: "memvault-row",
				attr: { "data-path": entry.path, tabindex: 0, role: "button", "aria-label": `Open ${entry.path}` },
			});
			if (entry.path === activePath) row.addClass("is-active");
			if (entry.lifecycle === "superseded") row.addClass("is-superseded");
			const head = row.createDiv({ cls: "memvault-row-head" });
			head.createDiv({ cls: "memvault-row-title", text: entry.title });
			renderBadges(head, entry);
			const summary = entry.summary || entry.trigger;
			if (summary) row.createDiv({ cls: "memvault-summary", text: summary });
		}
	}

	private openRow(evt: MouseEvent | KeyboardEvent): void {
		const target = evt.target instanceof HTMLElement ? evt.target.closest<HTMLElement>(".memvault-row") : null;
		const path = target?.getAttribute("data-path");
		if (!path) return;
		evt.preventDefault();
		void openPath(this.app, path, Keymap.isModEvent(evt));
	}
}
