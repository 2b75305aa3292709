/**
 * Evaluate a built main.js the way Obsidian does: as a CommonJS module body,
 * wrapped in new Function("require", "module", "exports", source), with a
 * require that answers for "obsidian" (and whatever else the caller allows).
 * Used by the bundle smoke test and the screenshot tool.
 */

import { existsSync, readFileSync } from "node:fs";

export type PluginClass<T> = new (app: unknown, manifest: unknown) => T;

export function loadBundle<T>(mainPath: string, require: (id: string) => unknown): PluginClass<T> {
	if (!existsSync(mainPath)) throw new Error(`${mainPath} is missing: run npm run build (npm test does)`);
	const module = { exports: {} as Record<string, unknown> };
	// The CommonJS wrapper Obsidian evaluates a plugin's main.js with (eslint.config.mts allows it in this file only).
	const wrapper = new Function("require", "module", "exports", readFileSync(mainPath, "utf8")) as
		(require: (id: string) => unknown, module: { exports: Record<string, unknown> }, exports: Record<string, unknown>) => void;
	wrapper(require, module, module.exports);
	const plugin = module.exports.default;
	if (typeof plugin !== "function") throw new Error(`${mainPath} has no default export (the plugin class)`);
	return plugin as PluginClass<T>;
}
