import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// happy-dom replaces the global URL inside tests, so paths are built from the file path here.
const root = dirname(fileURLToPath(import.meta.url));

export default defineConfig({
	resolve: {
		alias: { obsidian: resolve(root, "tests/__mocks__/obsidian.ts") },
	},
	test: {
		environment: "happy-dom",
		include: ["tests/**/*.test.ts"],
	},
});
