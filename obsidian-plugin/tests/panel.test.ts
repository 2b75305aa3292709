import { describe, expect, it } from "vitest";
import { toMemoryEntry, type MemoryEntry } from "../src/memory";
import { buildPanel, guessProject, projectSlugOf } from "../src/panel";
import { MOBILE, SAMPLE_FILES, WEBAPP } from "./sample-vault";

const entries: MemoryEntry[] = Object.entries(SAMPLE_FILES)
	.map(([path, fm]) => toMemoryEntry(path, fm))
	.filter((m): m is MemoryEntry => m !== null);

function memoryAt(path: string): MemoryEntry | null {
	return entries.find((m) => m.path === path) ?? null;
}

function titles(model: ReturnType<typeof buildPanel>): Record<string, string[]> {
	return Object.fromEntries(model.groups.map((g) => [g.key, g.entries.map((m) => m.title)]));
}

describe("the open note's project", () => {
	it("finds the project folder's slug", () => {
		expect(projectSlugOf("memories/projects/github.com-example-webapp/x.md")).toBe("github.com-example-webapp");
		expect(projectSlugOf("episodes/projects/s/deeper/x.md")).toBe("s");
		expect(projectSlugOf("memories/global/x.md")).toBeNull();
		expect(projectSlugOf("notes/memories/projects/s/x.md")).toBeNull();
	});

	it("is the open memory's own project key", () => {
		const path = "memories/projects/github.com-example-mobile/the-mobile-app-uses-expo.md";
		expect(guessProject(path, memoryAt(path), entries)).toEqual({
			project: MOBILE, reason: "From the open memory's project key.",
		});
	});

	it("is the project whose memories live in the note's project folder", () => {
		const guess = guessProject("memories/projects/github.com-example-webapp/INDEX.md", null, entries);
		expect(guess.project).toBe(WEBAPP);
		expect(guess.reason).toBe("From the memories in projects/github.com-example-webapp.");
		// The episodes tree shares the slug with the memories tree.
		expect(guessProject("episodes/projects/github.com-example-webapp/new.md", null, entries).project).toBe(WEBAPP);
	});

	it("falls back to the memories in the note's own folder, else none", () => {
		const local = toMemoryEntry("work/api/rule.md", { id: "m-x", title: "t", type: "fact", scope: "project", project: "p/q" });
		if (!local) throw new Error("not a memory");
		expect(guessProject("work/api/notes.md", null, [...entries, local]).project).toBe("p/q");
		expect(guessProject("notes/meeting.md", null, entries)).toEqual({
			project: null, reason: "No project here: global memories only.",
		});
		expect(guessProject(null, null, entries).project).toBeNull();
	});

	it("takes the key most memories of the folder carry", () => {
		const make = (n: number, project: string): MemoryEntry | null =>
			toMemoryEntry(`memories/projects/s/${n}.md`, { id: `m-${n}`, title: "t", type: "fact", scope: "project", project });
		const mixed = [make(1, "b"), make(2, "a"), make(3, "b")].filter((m): m is MemoryEntry => m !== null);
		expect(guessProject("memories/projects/s/x.md", null, mixed).project).toBe("b");
	});
});

describe("the panel's memories", () => {
	it("shows global memories plus the project's, grouped as the director delivers them", () => {
		const model = buildPanel(entries, { project: WEBAPP, reason: "" }, false);
		expect(titles(model)).toEqual({
			resident: ["Who I work with", "Keep answers short"],
			ranked: [
				"Run the tests before proposing a commit",
				"Staging runs on Postgres 16",
				"Use pytest fixtures, not setUp",
				"Review checklist",
				"Prefers tabs in Makefiles",
				"Flaky login test on CI",
			],
			never: ["Vendor API rate limits"],
		});
		expect(model.hiddenSuperseded).toBe(1);
		expect(model.total).toBe(9);
		expect(model.groups.map((g) => g.dimmed)).toEqual([false, false, true]);
	});

	it("never shows another project's memories", () => {
		const all = buildPanel(entries, { project: MOBILE, reason: "" }, true).groups.flatMap((g) => g.entries);
		expect(all.map((m) => m.project).filter((p) => p !== null)).toEqual([MOBILE]);
		const global = buildPanel(entries, { project: null, reason: "" }, true).groups.flatMap((g) => g.entries);
		expect(global.every((m) => m.scope === "global")).toBe(true);
	});

	it("shows superseded memories dimmed at the bottom when asked", () => {
		const model = buildPanel(entries, { project: WEBAPP, reason: "" }, true);
		expect(titles(model).never).toEqual(["Vendor API rate limits", "Staging runs on Postgres 14"]);
		expect(model.hiddenSuperseded).toBe(0);
	});

	it("leaves out empty groups", () => {
		const only = entries.filter((m) => m.title === "Review checklist");
		expect(buildPanel(only, { project: null, reason: "" }, false).groups.map((g) => g.key)).toEqual(["ranked"]);
	});
});
