/**
 * The golden contract: every JSON file in ../contract/ (real answers of the
 * engine, also checked by pytest) must decode with the plugin's decoders and
 * feed the plugin's rendering helpers. A missing folder, a missing expected
 * file or a file this test does not know fails: nothing is skipped.
 */

import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
	ContractError, decodeContext, decodeCorrect, decodeErrorEnvelope, decodeFeedback, decodeForget, decodeRead,
	decodeRemember, decodeSearch, decodeStatus,
} from "../src/contract";
import { badgesFor } from "../src/memory";
import { feedbackLine, forgetLine, manifestForDisplay, manifestSummary, statusText, statusTooltip } from "../src/messages";
import { suggestionsOf } from "../src/modals";

const CONTRACT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "contract");

const DECODERS: Record<string, (value: unknown) => unknown> = {
	"search.json": decodeSearch,
	"read.json": decodeRead,
	"read-depth0.json": decodeRead,
	"context.json": decodeContext,
	"status.json": decodeStatus,
	"feedback.json": decodeFeedback,
	"forget.json": decodeForget,
	"correct.json": decodeCorrect,
	"remember.json": decodeRemember,
	"error.json": decodeErrorEnvelope,
};

/** The answers the plugin calls for: these must exist. */
const REQUIRED = ["search.json", "read.json", "context.json", "status.json", "feedback.json", "forget.json", "error.json"];

function load(name: string): unknown {
	return JSON.parse(readFileSync(join(CONTRACT, name), "utf8")) as unknown;
}

describe("golden contract", () => {
	it("exists beside the plugin, with every answer the plugin uses", () => {
		expect(existsSync(CONTRACT), `${CONTRACT} is missing`).toBe(true);
		const names = readdirSync(CONTRACT).filter((name) => name.endsWith(".json"));
		for (const name of REQUIRED) expect(names, `${name} is missing`).toContain(name);
	});

	it("has a decoder for every file (a new file needs one here)", () => {
		const names = readdirSync(CONTRACT).filter((name) => name.endsWith(".json"));
		expect(names.length).toBeGreaterThan(0);
		expect(names.filter((name) => !(name in DECODERS))).toEqual([]);
	});

	it("decodes every file", () => {
		const names = readdirSync(CONTRACT).filter((name) => name.endsWith(".json"));
		for (const name of names) {
			const decode = DECODERS[name];
			if (!decode) throw new Error(`no decoder for ${name}`);
			expect(() => decode(load(name)), name).not.toThrow();
		}
	});

	it("search: hits become suggestions with trust, lifecycle and tier badges", () => {
		const result = decodeSearch(load("search.json"));
		expect(result.hits.length).toBeGreaterThan(0);
		const suggestions = suggestionsOf(result);
		expect(suggestions).toHaveLength(result.hits.length + result.revivable.length);
		for (const hit of result.hits) {
			expect(badgesFor(hit).map((b) => b.cls)).toEqual([
				`memvault-badge memvault-trust-${hit.trust}`,
				`memvault-badge memvault-lifecycle-${hit.lifecycle}`,
				`memvault-badge memvault-tier-${hit.tier}`,
			]);
			expect(hit.path.endsWith(".md")).toBe(true);
			expect(hit.path.startsWith("/")).toBe(false);
		}
	});

	it("read: depth 2 carries the body, depth 0 only the summary", () => {
		const deep = decodeRead(load("read.json"));
		expect(deep.depth).toBe(2);
		expect(typeof deep.body).toBe("string");
		expect(deep.metadata).toBeDefined();
		const shallow = decodeRead(load("read-depth0.json"));
		expect(shallow.depth).toBe(0);
		expect(shallow.metadata).toBeUndefined();
	});

	it("context: the manifest's markdown and its summary line", () => {
		const result = decodeContext(load("context.json"));
		expect(result.markdown.trim()).not.toBe("");
		expect(result.used).toBeLessThanOrEqual(result.budget);
		expect(manifestForDisplay(result.markdown)).not.toContain("memory-context>");
		expect(manifestSummary(result)).toMatch(
			new RegExp(`^${result.resident.length} resident, ${result.manifest.length} in the manifest, ${result.used} of ${result.budget} characters`));
	});

	it("status, feedback, forget: the one-line texts", () => {
		const status = decodeStatus(load("status.json"));
		expect(statusText(status)).toMatch(/^memvault: index (current|stale|missing|unreadable) · hot \d+%$/);
		expect(statusTooltip(status, "test")).toContain(status.index);
		const feedback = decodeFeedback(load("feedback.json"));
		expect(feedbackLine(feedback)).toMatch(new RegExp(`^recorded ${feedback.outcome} for ${feedback.id}: `));
		const forget = decodeForget(load("forget.json"));
		expect(forgetLine(forget)).toBe(`moved ${forget.id} to ${forget.path ?? ""} (undo: memvault rollback ${forget.id})`);
	});

	it("error: the envelope names a kind and a one-line message", () => {
		const envelope = decodeErrorEnvelope(load("error.json"));
		expect(envelope.error.kind).toMatch(/^[A-Z][A-Za-z]+$/);
		expect(envelope.error.message).not.toContain("\n");
	});

	it("fails loudly when a field changes shape", () => {
		const search = load("search.json") as { hits: Record<string, unknown>[] };
		const hit = search.hits[0];
		if (!hit) throw new Error("search.json has no hits");
		hit.tier = "warm";
		expect(() => decodeSearch(search)).toThrow(new ContractError(
			"memvault search response does not match the plugin's contract: hits[0].tier: expected one of hot, cold, got \"warm\""));
		const status = load("status.json") as Record<string, unknown>;
		delete status.hot_budget;
		expect(() => decodeStatus(status)).toThrow(/hot_budget: expected a whole number, got nothing/);
		const read = load("read.json") as Record<string, unknown>;
		delete read.body;
		expect(() => decodeRead(read)).toThrow(/body: expected a string at depth 2, got nothing/);
	});
});
