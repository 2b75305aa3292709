/**
 * The stand-in obsidian module must not drift from the real API: every export
 * must be declared in obsidian.d.ts, every method of a mocked class must exist
 * on that class (or a class it extends) there, and every Platform flag too.
 * Test-only helpers end in `__` and are exempt.
 */

import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import * as mock from "./__mocks__/obsidian";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const dts = readFileSync(join(root, "node_modules", "obsidian", "obsidian.d.ts"), "utf8");

const declared = new Set([...dts.matchAll(
	/^export (?:declare )?(?:abstract )?(?:class|function|const|let|var|interface|type|enum) (\w+)/gm,
)].map((m) => m[1]));

/** The text of a declared block (class body or const type) starting at `header`, braces matched. */
function block(header: RegExp): string | null {
	const match = header.exec(dts);
	if (!match) return null;
	let depth = 0;
	for (let at = match.index + match[0].length - 1; at < dts.length; at++) {
		if (dts[at] === "{") depth++;
		else if (dts[at] === "}" && --depth === 0) return dts.slice(match.index, at + 1);
	}
	return null;
}

/** A class's declaration plus those of the classes it extends. */
function classChain(name: string): string {
	const body = block(new RegExp(`^export (?:abstract )?class ${name}\\b[^{]*\\{`, "m"));
	if (!body) return "";
	const parent = /^export (?:abstract )?class \w+(?:<[^{]*?>)? extends (\w+)/.exec(body)?.[1];
	return body + (parent ? classChain(parent) : "");
}

function hasMember(chain: string, member: string): boolean {
	return new RegExp(`^\\s+(?:static\\s+)?(?:abstract\\s+)?(?:protected\\s+)?(?:readonly\\s+)?${member}\\??\\s*[(<:]`, "m").test(chain);
}

function ownMethods(target: object): string[] {
	return Object.getOwnPropertyNames(target).filter((name) =>
		!["constructor", "length", "name", "prototype"].includes(name) && !name.endsWith("__")
		&& typeof (target as Record<string, unknown>)[name] === "function");
}

/** What is wrong with one export of the mock; empty when it matches obsidian.d.ts. */
function problemsOf(name: string, value: unknown): string[] {
	if (name.endsWith("__")) return [];
	if (!declared.has(name)) return [`${name} is not declared in obsidian.d.ts`];
	const problems: string[] = [];
	if (typeof value === "function" && /^class\b/.test(Function.prototype.toString.call(value))) {
		const chain = classChain(name);
		if (!chain) return [`${name} is not a class in obsidian.d.ts`];
		const cls = value as { prototype: object };
		for (const method of [...ownMethods(cls.prototype), ...ownMethods(cls)]) {
			if (!hasMember(chain, method)) problems.push(`${name}.${method} is not in obsidian.d.ts`);
		}
	} else if (typeof value === "object" && value !== null) {
		const body = block(new RegExp(`^export const ${name}: \\{`, "m")) ?? "";
		for (const key of Object.keys(value)) {
			if (!hasMember(body, key)) problems.push(`${name}.${key} is not in obsidian.d.ts`);
		}
	}
	return problems;
}

describe("the obsidian stand-in", () => {
	it("exports only names, methods and flags that obsidian.d.ts declares", () => {
		const problems = Object.entries(mock).flatMap(([name, value]) => problemsOf(name, value));
		expect(problems).toEqual([]);
		expect(Object.keys(mock).filter((name) => !name.endsWith("__")).length).toBeGreaterThan(25);
	});

	it("would catch drift: an unknown export, method or flag", () => {
		expect(problemsOf("ObsidianTeleporter", {})).toEqual(["ObsidianTeleporter is not declared in obsidian.d.ts"]);
		class Notice {
			hide(): void {}
			explode(): void {}
		}
		expect(problemsOf("Notice", Notice)).toEqual(["Notice.explode is not in obsidian.d.ts"]);
		expect(problemsOf("Platform", { isDesktop: true, isToaster: false })).toEqual(["Platform.isToaster is not in obsidian.d.ts"]);
	});

	it("finds inherited members through the extends chain", () => {
		class Plugin {
			registerEvent(): void {}
			addCommand(): void {}
		}
		expect(problemsOf("Plugin", Plugin)).toEqual([]);
	});
});
