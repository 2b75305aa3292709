/** The plugin's settings: values, defaults, validation of stored data, and the settings tab. */

import { PluginSettingTab, Setting, type App, type Plugin } from "obsidian";
import type { TransportMode } from "./client";

export interface MemvaultSettings {
	/** auto: memvault serve when it runs, else the CLI; or one of them only. */
	transport: TransportMode;
	/** The memvault command; an absolute path is safest (see the README). */
	cliPath: string;
	timeoutSeconds: number;
	searchLimit: number;
	/** Limit search to the open note's project (and global memories). */
	searchCurrentProject: boolean;
	/** How often the status bar asks the engine for its status; 0 turns it off. */
	statusIntervalSeconds: number;
	/** Show superseded memories, dimmed, at the bottom of the panel. */
	showSuperseded: boolean;
	/** Prefill the manifest's path with the open note's path (matched against path selectors). */
	useNotePath: boolean;
	/** Journal manifests shown in Obsidian as applications (off: a preview, as --no-record). */
	recordManifests: boolean;
}

export const DEFAULT_SETTINGS: MemvaultSettings = {
	transport: "auto",
	cliPath: "memvault",
	timeoutSeconds: 30,
	searchLimit: 20,
	searchCurrentProject: false,
	statusIntervalSeconds: 60,
	showSuperseded: false,
	useNotePath: true,
	recordManifests: false,
};

function wholeNumber(value: unknown, low: number, high: number, fallback: number): number {
	return typeof value === "number" && Number.isInteger(value) && value >= low && value <= high ? value : fallback;
}

/** Stored data with every unknown or invalid value replaced by its default. */
export function normalizeSettings(data: unknown): MemvaultSettings {
	const raw = (typeof data === "object" && data !== null ? data : {}) as Record<string, unknown>;
	const flag = (key: keyof MemvaultSettings): boolean =>
		typeof raw[key] === "boolean" ? raw[key] : (DEFAULT_SETTINGS[key] as boolean);
	return {
		transport: raw.transport === "http" || raw.transport === "cli" || raw.transport === "auto"
			? raw.transport : DEFAULT_SETTINGS.transport,
		cliPath: typeof raw.cliPath === "string" && raw.cliPath.trim() ? raw.cliPath.trim() : DEFAULT_SETTINGS.cliPath,
		timeoutSeconds: wholeNumber(raw.timeoutSeconds, 1, 600, DEFAULT_SETTINGS.timeoutSeconds),
		searchLimit: wholeNumber(raw.searchLimit, 1, 100, DEFAULT_SETTINGS.searchLimit),
		searchCurrentProject: flag("searchCurrentProject"),
		statusIntervalSeconds: wholeNumber(raw.statusIntervalSeconds, 0, 3600, DEFAULT_SETTINGS.statusIntervalSeconds),
		showSuperseded: flag("showSuperseded"),
		useNotePath: flag("useNotePath"),
		recordManifests: flag("recordManifests"),
	};
}

/** What the settings tab needs from the plugin. */
export interface SettingsHost extends Plugin {
	settings: MemvaultSettings;
	saveSettings(): Promise<void>;
}

export class MemvaultSettingTab extends PluginSettingTab {
	constructor(app: App, private readonly host: SettingsHost) {
		super(app, host);
	}

	override display(): void {
		const { containerEl } = this;
		const settings = this.host.settings;
		const save = async (change: Partial<MemvaultSettings>): Promise<void> => {
			Object.assign(settings, change);
			await this.host.saveSettings();
		};
		containerEl.empty();

		new Setting(containerEl).setName("Engine").setHeading();
		new Setting(containerEl)
			.setName("Transport")
			.setDesc("How the plugin reaches the engine. Automatic uses the local server started by `memvault serve` "
				+ "when it runs (faster: its indexes stay loaded) and the command line otherwise.")
			.addDropdown((dropdown) => dropdown
				.addOptions({ auto: "Automatic", http: "Local server only", cli: "Command line only" })
				.setValue(settings.transport)
				.onChange(async (value) => save({ transport: normalizeSettings({ transport: value }).transport })));
		new Setting(containerEl)
			.setName("Command line path")
			.setDesc("The memvault command. Use an absolute path (find it with `which memvault`): "
				+ "Obsidian started from the desktop often does not see the shell's PATH.")
			.addText((text) => text
				.setPlaceholder("memvault")
				.setValue(settings.cliPath)
				.onChange(async (value) => save({ cliPath: value.trim() || DEFAULT_SETTINGS.cliPath })));
		new Setting(containerEl)
			.setName("Timeout in seconds")
			.setDesc("Most time one engine call may take before it is reported as failed.")
			.addText((text) => text
				.setValue(String(settings.timeoutSeconds))
				.onChange(async (value) => save({ timeoutSeconds: wholeNumber(Number(value), 1, 600, settings.timeoutSeconds) })));
		new Setting(containerEl)
			.setName("Status refresh in seconds")
			.setDesc("How often the status bar shows index freshness and hot-tier use; 0 refreshes only after engine calls.")
			.addText((text) => text
				.setValue(String(settings.statusIntervalSeconds))
				.onChange(async (value) => save({
					statusIntervalSeconds: wholeNumber(Number(value), 0, 3600, settings.statusIntervalSeconds),
				})));

		new Setting(containerEl).setName("Panel").setHeading();
		new Setting(containerEl)
			.setName("Show superseded memories")
			.setDesc("List memories replaced by newer ones, dimmed, at the bottom of the panel.")
			.addToggle((toggle) => toggle
				.setValue(settings.showSuperseded)
				.onChange(async (value) => save({ showSuperseded: value })));

		new Setting(containerEl).setName("Search and manifests").setHeading();
		new Setting(containerEl)
			.setName("Search results")
			.setDesc("Most memories one search shows (1 to 100).")
			.addText((text) => text
				.setValue(String(settings.searchLimit))
				.onChange(async (value) => save({ searchLimit: wholeNumber(Number(value), 1, 100, settings.searchLimit) })));
		new Setting(containerEl)
			.setName("Search the current project only")
			.setDesc("Off: search the whole vault. On: only global memories and the open note's project.")
			.addToggle((toggle) => toggle
				.setValue(settings.searchCurrentProject)
				.onChange(async (value) => save({ searchCurrentProject: value })));
		new Setting(containerEl)
			.setName("Prefill the path with the open note")
			.setDesc("The manifest prompt starts with the open note's path, matched against the memories' path "
				+ "selectors. Turn off when your selectors name repository paths rather than vault paths.")
			.addToggle((toggle) => toggle
				.setValue(settings.useNotePath)
				.onChange(async (value) => save({ useNotePath: value })));
		new Setting(containerEl)
			.setName("Record manifests")
			.setDesc("Journal each manifest shown here as an application, as when an agent asks for one. "
				+ "Off: a preview that leaves no trace.")
			.addToggle((toggle) => toggle
				.setValue(settings.recordManifests)
				.onChange(async (value) => save({ recordManifests: value })));
	}
}
