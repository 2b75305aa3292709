import obsidianmd from "eslint-plugin-obsidianmd";
import globals from "globals";
import { defineConfig, globalIgnores } from "eslint/config";

export default defineConfig(
	{
		languageOptions: {
			globals: {
				...globals.browser,
			},
			parserOptions: {
				projectService: {
					allowDefaultProject: ["eslint.config.mts", "esbuild.config.mjs", "tools/*.mjs"],
				},
				tsconfigRootDir: import.meta.dirname,
				extraFileExtensions: [".json"],
			},
		},
	},
	...obsidianmd.configs.recommended,
	{
		files: ["**/*.ts"],
		rules: {
			// The product's name is written in lower case, like a command.
			"obsidianmd/ui/sentence-case": ["warn", { enforceCamelCaseLower: true, ignoreRegex: ["^memvault\\b"] }],
			// The declarative settings API needs Obsidian 1.13.0; this plugin supports 1.7.2 and later.
			"obsidianmd/settings-tab/prefer-setting-definitions": "off",
		},
	},
	{
		// The stand-in for the obsidian module implements createEl and debounce, so it uses the DOM and timers directly.
		files: ["tests/__mocks__/**"],
		rules: {
			"obsidianmd/prefer-create-el": "off",
			"obsidianmd/prefer-window-timers": "off",
		},
	},
	{
		// The smoke test evaluates the built main.js with the CommonJS wrapper Obsidian uses: new Function(...).
		files: ["tests/load-bundle.ts"],
		rules: {
			"@typescript-eslint/no-implied-eval": "off",
			"obsidianmd/rule-custom-message": "off",
			"no-console": ["error", { allow: ["warn", "error", "debug"] }],
		},
	},
	{
		// tools/ holds Node scripts run at development time (the screenshot page), never loaded by Obsidian:
		// they install DOM globals, import the page module they just bundled, and print what they wrote.
		files: ["tools/**"],
		rules: {
			"obsidianmd/no-global-this": "off",
			"no-unsanitized/method": "off",
			"obsidianmd/rule-custom-message": "off",
		},
	},
	globalIgnores(["node_modules", "main.js", "tools/out"]),
);
