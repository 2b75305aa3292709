import { describe, expect, it } from "vitest";
import { badgesFor, compareForPanel, delivery, score, toMemoryEntry, type MemoryEntry } from "../src/memory";
import { SAMPLE_FILES } from "./sample-vault";

function entry(path: string): MemoryEntry {
	const memory = toMemoryEntry(path, SAMPLE_FILES[path]);
	if (!memory) throw new Error(`${path} is not a memory`);
	return memory;
}

describe("frontmatter -> memory entry", () => {
	it("reads every key and applies the engine's defaults to missing ones", () => {
		const memory = toMemoryEntry("memories/global/x.md", { id: "m-1", title: " A title ", type: "fact" });
		expect(memory).toEqual({
			path: "memories/global/x.md", id: "m-1", title: "A title", type: "fact", scope: "global", project: null,
			trust: "learned", lifecycle: "trial", tier: "cold", recall: "active", authority: "inferred",
			importance: 0.5, summary: "", trigger: "", paths: [], applied: {}, problems: [],
		});
	});

	it("keeps project, selectors and outcome counts", () => {
		const memory = entry("memories/projects/github.com-example-webapp/use-pytest-fixtures-not-setup.md");
		expect(memory.scope).toBe("project");
		expect(memory.project).toBe("github.com/example/webapp");
		expect(memory.paths).toEqual(["tests/**"]);
		expect(entry("memories/global/run-the-tests-before-proposing-a-commit.md").applied)
			.toEqual({ "used-successfully": 3, ignored: 1 });
	});

	it("is null for files that are not memories", () => {
		expect(toMemoryEntry("notes/meeting.md", null)).toBeNull();
		expect(toMemoryEntry("notes/tagged.md", SAMPLE_FILES["notes/tagged.md"])).toBeNull();
		expect(toMemoryEntry("a.md", { id: "x-1", title: "t", type: "fact" })).toBeNull();
		expect(toMemoryEntry("a.md", { id: "m-1", title: "", type: "fact" })).toBeNull();
		expect(toMemoryEntry("a.md", { id: "m-1", title: "t" })).toBeNull();
	});

	it("skips trash, journal, derived state and trashed files", () => {
		const fm = { id: "m-1", title: "t", type: "fact" };
		for (const path of ["trash/a.md", "journal/a.md", ".memvault/a.md", ".trash/a.md"]) {
			expect(toMemoryEntry(path, fm), path).toBeNull();
		}
		expect(toMemoryEntry("memories/a.md", { ...fm, trashed_at: "2026-01-01T00:00:00Z" })).toBeNull();
		expect(toMemoryEntry("memories/trash/a.md", fm)).not.toBeNull();
	});

	it("reports values the engine would reject, and uses the default instead", () => {
		const memory = toMemoryEntry("a.md", {
			id: "m-1", title: "t", type: "fact", trust: "gossip", scope: "project", importance: 3,
			applied: { "used-successfully": 1, praised: 2 },
		});
		expect(memory?.trust).toBe("learned");
		expect(memory?.problems).toEqual([
			"scope: 'project' needs a project key",
			"importance: expected a number from 0 to 1",
			"trust: 'gossip' is not one of system, learned, external",
			"applied: unknown outcome 'praised'",
		]);
	});
});

describe("badges", () => {
	it("map trust, lifecycle and tier to CSS classes", () => {
		const badges = badgesFor(entry("memories/global/vendor-api-rate-limits.md"));
		expect(badges.map((b) => b.cls)).toEqual([
			"memvault-badge memvault-trust-external",
			"memvault-badge memvault-lifecycle-proven",
			"memvault-badge memvault-tier-cold",
		]);
		expect(badges.map((b) => b.label)).toEqual(["external", "proven", "cold"]);
		expect(badges[0]?.title).toMatch(/never delivered/);
	});

	it("name every value of every field", () => {
		for (const trust of ["system", "learned", "external"] as const) {
			for (const lifecycle of ["trial", "proven", "superseded"] as const) {
				for (const tier of ["hot", "cold"] as const) {
					const titles = badgesFor({ trust, lifecycle, tier }).map((b) => b.title);
					expect(titles.every((t) => /^(Trust|Lifecycle|Tier): /.test(t))).toBe(true);
				}
			}
		}
	});
});

describe("the context director's order", () => {
	it("scores lifecycle, authority, the project selector and past outcomes", () => {
		expect(score(entry("profile/who-i-work-with.md"))).toBe(300 + 160);
		expect(score(entry("memories/global/run-the-tests-before-proposing-a-commit.md"))).toBe(300 + 160 + 3 * 20 - 2);
		expect(score(entry("memories/projects/github.com-example-webapp/use-pytest-fixtures-not-setup.md"))).toBe(300 + 160 + 25);
		expect(score(entry("memories/global/prefers-tabs-in-makefiles.md"))).toBe(100);
		expect(score(entry("episodes/projects/github.com-example-webapp/flaky-login-test-on-ci.md"))).toBe(100 + 25 - 80);
		expect(score(entry("memories/projects/github.com-example-webapp/staging-runs-on-postgres-14.md"))).toBe(160 + 25);
	});

	it("delivers the core profile and passive recall always, external and superseded never", () => {
		expect(delivery(entry("profile/who-i-work-with.md"))).toBe("profile");
		expect(delivery(entry("memories/global/keep-answers-short.md"))).toBe("passive");
		expect(delivery(entry("memories/global/review-checklist.md"))).toBe("ranked");
		expect(delivery(entry("memories/global/vendor-api-rate-limits.md"))).toBe("never");
		expect(delivery(entry("memories/projects/github.com-example-webapp/staging-runs-on-postgres-14.md"))).toBe("never");
	});

	it("orders resident first, then by score, then title and id", () => {
		const paths = Object.keys(SAMPLE_FILES).filter((p) => toMemoryEntry(p, SAMPLE_FILES[p]));
		const titles = paths.map(entry).sort(compareForPanel).map((m) => m.title);
		expect(titles).toEqual([
			"Who I work with",
			"Keep answers short",
			"Run the tests before proposing a commit",
			"Staging runs on Postgres 16",
			"The mobile app uses Expo",
			"Use pytest fixtures, not setUp",
			"Review checklist",
			"Prefers tabs in Makefiles",
			"Flaky login test on CI",
			"Vendor API rate limits",
			"Staging runs on Postgres 14",
		]);
	});

	it("breaks ties by case-folded title, then by id", () => {
		const base = toMemoryEntry("a.md", { id: "m-b", title: "same", type: "fact" });
		const other = toMemoryEntry("b.md", { id: "m-a", title: "Same", type: "fact" });
		const first = toMemoryEntry("c.md", { id: "m-z", title: "Alpha", type: "fact" });
		if (!base || !other || !first) throw new Error("not memories");
		expect([base, other, first].sort(compareForPanel).map((m) => m.id)).toEqual(["m-z", "m-a", "m-b"]);
	});
});
