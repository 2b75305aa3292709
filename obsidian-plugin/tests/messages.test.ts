import { describe, expect, it } from "vitest";
import type { ContextResult, FeedbackResult, StatusResult } from "../src/contract";
import { feedbackLine, forgetLine, hotShare, manifestForDisplay, manifestSummary, statusText, statusTooltip } from "../src/messages";
import { normalizeSettings, DEFAULT_SETTINGS } from "../src/settings";

const feedback: FeedbackResult = {
	action: "recorded", id: "m-1", path: "memories/global/a.md", outcome: "ignored", old_lifecycle: "proven",
	lifecycle: "proven", applied: { ignored: 2 }, last_applied: null, application: null, event: "e-1",
};

const status: StatusResult = {
	vault: "/v", memories: 13, by_type: {}, by_lifecycle: {}, by_tier: {}, trash: 1, invalid: ["a.md:3: bad"],
	hot_chars: 235, hot_budget: 5000, journal_events: 18, journal_warnings: [], index: "stale (2 files changed)",
	index_state: "stale", embedding_model: "local/model",
};

describe("one-line results, as the CLI prints them", () => {
	it("feedback: recorded, a lifecycle change, superseded with its undo, already recorded", () => {
		expect(feedbackLine(feedback)).toBe("recorded ignored for m-1: proven (ignored 2 times)");
		expect(feedbackLine({ ...feedback, outcome: "used-successfully", old_lifecycle: "trial", applied: { "used-successfully": 1 } }))
			.toBe("recorded used-successfully for m-1: trial -> proven (used successfully 1 time)");
		expect(feedbackLine({ ...feedback, action: "superseded", outcome: "corrected", lifecycle: "superseded", applied: { corrected: 1 } }))
			.toBe("recorded corrected for m-1: proven -> superseded (corrected 1 time; undo: memvault rollback m-1)");
		expect(feedbackLine({ ...feedback, action: "already-recorded", application: "e-7" }))
			.toBe("already recorded ignored for m-1 in e-7: proven (ignored 2 times)");
	});

	it("forget: moved to the trash, or purged", () => {
		const change = { action: "forgotten", id: "m-1", path: "trash/a.md", related: null, event: "e-1", conflicts: [] };
		expect(forgetLine(change)).toBe("moved m-1 to trash/a.md (undo: memvault rollback m-1)");
		expect(forgetLine({ ...change, path: null })).toBe("purged m-1");
	});

	it("status: index freshness and hot-tier use", () => {
		expect(statusText(status)).toBe("memvault: index stale · hot 5%");
		expect(hotShare({ ...status, hot_budget: 0 })).toBe(0);
		expect(statusTooltip(status, "the memvault CLI (memvault)").split("\n")).toEqual([
			"13 memories, 1 in the trash",
			"Index: stale (2 files changed)",
			"Hot tier: 235 of 5000 characters (5%)",
			"Model: local/model",
			"Invalid files: 1 (run memvault status)",
			"Via the memvault CLI (memvault)",
		]);
	});

	it("context: the summary line and the markdown without its wrapper", () => {
		const result: ContextResult = {
			task: "t", project: null, budget: 6000, used: 120, application: "e-9", resident: [], omitted: 2, note: null,
			manifest: [{ id: "m-1", title: "A", abstract: "", whyApplied: [] }],
			markdown: "<memory-context>\nTask: t\n\n## May apply\n</memory-context>\n",
		};
		expect(manifestSummary(result)).toBe("0 resident, 1 in the manifest, 120 of 6000 characters, 2 left out for the budget; application e-9");
		expect(manifestForDisplay(result.markdown)).toBe("Task: t\n\n## May apply\n");
	});
});

describe("settings", () => {
	it("keep valid stored values and replace the rest with defaults", () => {
		expect(normalizeSettings(null)).toEqual(DEFAULT_SETTINGS);
		expect(normalizeSettings({ transport: "cli", cliPath: " /usr/bin/memvault ", timeoutSeconds: 5, showSuperseded: true }))
			.toEqual({ ...DEFAULT_SETTINGS, transport: "cli", cliPath: "/usr/bin/memvault", timeoutSeconds: 5, showSuperseded: true });
		expect(normalizeSettings({ transport: "smoke", cliPath: "", timeoutSeconds: -1, searchLimit: 1.5, statusIntervalSeconds: "x" }))
			.toEqual(DEFAULT_SETTINGS);
	});
});
