/** The plugin's lifecycle: settings, the engine client, the panel, commands and the status bar. */

import { FileSystemAdapter, Platform, Plugin, debounce, requestUrl } from "obsidian";
import { CliTransport, type ExecFileFn } from "./cli";
import { EngineRouter, TransportUnavailable, errorLine } from "./client";
import { registerCommands } from "./commands";
import { HttpTransport, SERVE_FILE, refusedServeFile } from "./http";
import { UNAVAILABLE, statusText, statusTooltip } from "./messages";
import { DEFAULT_SETTINGS, MemvaultSettingTab, normalizeSettings, type MemvaultSettings } from "./settings";
import { MemoryPanelView, VIEW_TYPE } from "./view";

/** Node's execFile, loaded on first use (desktop only). */
async function loadExecFile(): Promise<ExecFileFn> {
	if (!Platform.isDesktop) throw new TransportUnavailable("the memvault CLI needs Obsidian's desktop app");
	const childProcess = await import("child_process");
	return childProcess.execFile;
}

export default class MemvaultPlugin extends Plugin {
	override settings: MemvaultSettings = { ...DEFAULT_SETTINGS };
	engine!: EngineRouter;
	private statusEl: HTMLElement | null = null;
	private statusTimer: number | null = null;
	private statusBusy = false;

	override async onload(): Promise<void> {
		await this.loadSettings();
		this.engine = this.createEngine();
		this.registerView(VIEW_TYPE, (leaf) => new MemoryPanelView(leaf, this));
		this.addRibbonIcon("brain", "Open memory panel", () => void this.activateView());
		this.addSettingTab(new MemvaultSettingTab(this.app, this));
		registerCommands(this);

		const statusEl = this.addStatusBarItem();
		statusEl.addClass("memvault-status");
		statusEl.setText("memvault: ...");
		this.statusEl = statusEl;
		this.registerDomEvent(statusEl, "click", () => void this.refreshStatus());
		this.restartStatusTimer();
		this.app.workspace.onLayoutReady(() => void this.refreshStatus());
	}

	/** The vault's folder on disk (the CLI's --vault and working folder). */
	vaultPath(): string {
		const adapter = this.app.vault.adapter;
		if (adapter instanceof FileSystemAdapter) return adapter.getBasePath();
		throw new TransportUnavailable("this vault is not a folder on disk");
	}

	private createEngine(): EngineRouter {
		const timeoutMs = (): number => this.settings.timeoutSeconds * 1000;
		const adapter = this.app.vault.adapter;
		const http = new HttpTransport({
			requestUrl: (request) => requestUrl(request),
			readServeFile: async () => {
				if (!(await adapter.exists(SERVE_FILE))) return null;
				if (adapter instanceof FileSystemAdapter && Platform.isDesktop && process.platform !== "win32") {
					const fs = await import("fs");
					const stat = await fs.promises.lstat(adapter.getFullPath(SERVE_FILE));
					const refused = refusedServeFile(stat, process.getuid?.() ?? null);
					if (refused !== null) throw new TransportUnavailable(refused);
				}
				return adapter.read(SERVE_FILE);
			},
			timeoutMs,
		});
		const cli = new CliTransport({
			execFile: loadExecFile,
			cliPath: () => this.settings.cliPath,
			vaultPath: () => this.vaultPath(),
			timeoutMs,
		});
		const afterCall = debounce(() => void this.refreshStatus(), 1000, true);
		this.register(() => afterCall.cancel());
		return new EngineRouter({
			http, cli,
			mode: () => this.settings.transport,
			onCall: () => {
				if (!this.statusBusy) afterCall();
			},
		});
	}

	/** Ask the engine for its status and show index freshness and hot-tier use. */
	async refreshStatus(): Promise<void> {
		const el = this.statusEl;
		if (!el || this.statusBusy) return;
		this.statusBusy = true;
		try {
			const status = await this.engine.status();
			el.setText(statusText(status));
			el.setAttr("aria-label", statusTooltip(status, this.engine.lastTransport?.describe() ?? "the engine"));
			el.removeClass("is-unavailable");
		} catch (error) {
			el.setText(UNAVAILABLE);
			el.setAttr("aria-label", errorLine(error));
			el.addClass("is-unavailable");
		} finally {
			this.statusBusy = false;
		}
	}

	restartStatusTimer(): void {
		if (this.statusTimer !== null) window.clearInterval(this.statusTimer);
		this.statusTimer = null;
		const seconds = this.settings.statusIntervalSeconds;
		if (seconds > 0) {
			this.statusTimer = this.registerInterval(window.setInterval(() => void this.refreshStatus(), seconds * 1000));
		}
	}

	async activateView(): Promise<void> {
		const { workspace } = this.app;
		let leaf = workspace.getLeavesOfType(VIEW_TYPE)[0] ?? null;
		if (!leaf) {
			leaf = workspace.getRightLeaf(false);
			if (!leaf) return;
			await leaf.setViewState({ type: VIEW_TYPE, active: true });
		}
		await workspace.revealLeaf(leaf);
	}

	async loadSettings(): Promise<void> {
		this.settings = normalizeSettings(await this.loadData());
	}

	async saveSettings(): Promise<void> {
		await this.saveData(this.settings);
		this.restartStatusTimer();
		for (const leaf of this.app.workspace.getLeavesOfType(VIEW_TYPE)) {
			if (leaf.view instanceof MemoryPanelView) leaf.view.render();
		}
	}
}
