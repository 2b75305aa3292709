import { afterEach, describe, expect, it, vi } from "vitest";
import { MemoryPanelView, REFRESH_MS, VIEW_TYPE } from "../src/view";
import { WorkspaceLeaf } from "./__mocks__/obsidian";
import { createFakeApp, type FakeApp } from "./fakes";
import { SAMPLE_FILES } from "./sample-vault";

const PYTEST = "memories/projects/github.com-example-webapp/use-pytest-fixtures-not-setup.md";

async function openPanel(fake: FakeApp, showSuperseded = false): Promise<MemoryPanelView> {
	const view = new MemoryPanelView(new WorkspaceLeaf(fake.app) as never, { settings: { showSuperseded } });
	view.load();
	await view.onOpen();
	return view;
}

function rows(view: MemoryPanelView): string[] {
	return [...view.contentEl.querySelectorAll(".memvault-row-title")].map((el) => el.textContent ?? "");
}

afterEach(() => {
	vi.useRealTimers();
});

describe("side panel", () => {
	it("lists global memories and the open note's project, with badges and summaries", async () => {
		const fake = createFakeApp(SAMPLE_FILES);
		fake.open(PYTEST);
		const view = await openPanel(fake);
		expect(view.getViewType()).toBe(VIEW_TYPE);
		expect(view.contentEl.querySelector(".memvault-project")?.textContent).toBe("Project: github.com/example/webapp");
		expect(rows(view)).toEqual([
			"Who I work with", "Keep answers short", "Run the tests before proposing a commit", "Staging runs on Postgres 16",
			"Use pytest fixtures, not setUp", "Review checklist", "Prefers tabs in Makefiles", "Flaky login test on CI",
			"Vendor API rate limits",
		]);
		const active = view.contentEl.querySelector(".memvault-row.is-active");
		expect(active?.getAttribute("data-path")).toBe(PYTEST);
		expect([...(active?.querySelectorAll(".memvault-badge") ?? [])].map((b) => b.textContent)).toEqual(["learned", "proven", "cold"]);
		expect(active?.querySelector(".memvault-summary")?.textContent).toBe("Tests in this repository use pytest fixtures from tests/conftest.py.");
		expect(view.contentEl.querySelector(".memvault-group-never")?.classList.contains("is-dimmed")).toBe(true);
		expect(view.contentEl.querySelector(".memvault-footer")?.textContent).toBe("1 superseded memory hidden (see the plugin's settings).");
		expect(view.contentEl.querySelector("script")).toBeNull();
	});

	it("shows global memories only for a note outside any project, and superseded ones when asked", async () => {
		const fake = createFakeApp(SAMPLE_FILES);
		fake.open("notes/meeting.md");
		const view = await openPanel(fake, true);
		expect(view.contentEl.querySelector(".memvault-project")?.textContent).toBe("Global memories");
		expect(rows(view)).not.toContain("Use pytest fixtures, not setUp");
		expect(rows(view)).toContain("Review checklist");
		const empty = createFakeApp({});
		const nothing = await openPanel(empty);
		expect(nothing.contentEl.querySelector(".memvault-empty")?.textContent).toBe("No memories apply here.");
	});

	it("refreshes, debounced, when the open note or the metadata changes", async () => {
		vi.useFakeTimers();
		const fake = createFakeApp(SAMPLE_FILES);
		const view = await openPanel(fake);
		expect(rows(view)).not.toContain("The mobile app uses Expo");
		fake.open("memories/projects/github.com-example-mobile/the-mobile-app-uses-expo.md");
		fake.setFrontmatter("memories/global/new.md", { id: "m-new", title: "A new memory", type: "fact" });
		expect(rows(view)).not.toContain("The mobile app uses Expo");
		await vi.advanceTimersByTimeAsync(REFRESH_MS);
		expect(rows(view)).toContain("The mobile app uses Expo");
		expect(rows(view)).toContain("A new memory");
		fake.metadataCache.trigger("resolved");
		fake.setFrontmatter("memories/global/new.md", { id: "m-new", title: "Renamed", type: "fact" });
		await vi.advanceTimersByTimeAsync(REFRESH_MS);
		expect(rows(view)).toContain("Renamed");
	});

	it("registers its listeners with the view, so closing it removes them", async () => {
		const fake = createFakeApp(SAMPLE_FILES);
		const view = await openPanel(fake);
		for (const name of ["active-leaf-change", "file-open"]) expect(fake.workspace.listenerCount__(name), name).toBe(1);
		for (const name of ["changed", "resolved"]) expect(fake.metadataCache.listenerCount__(name), name).toBe(1);
		view.unload();
		for (const name of ["active-leaf-change", "file-open"]) expect(fake.workspace.listenerCount__(name)).toBe(0);
		for (const name of ["changed", "resolved"]) expect(fake.metadataCache.listenerCount__(name)).toBe(0);
	});

	it("opens a memory when its row is clicked or activated with Enter", async () => {
		const fake = createFakeApp(SAMPLE_FILES);
		fake.open(PYTEST);
		const view = await openPanel(fake);
		const row = [...view.contentEl.querySelectorAll<HTMLElement>(".memvault-row")]
			.find((el) => el.getAttribute("data-path") === "memories/global/review-checklist.md");
		row?.querySelector<HTMLElement>(".memvault-summary")?.click();
		row?.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
		await Promise.resolve();
		expect(fake.workspace.mainLeaf.opened__).toEqual(["memories/global/review-checklist.md", "memories/global/review-checklist.md"]);
		view.contentEl.querySelector<HTMLElement>(".memvault-project")?.click();
		await Promise.resolve();
		expect(fake.workspace.mainLeaf.opened__).toHaveLength(2);
	});
});
