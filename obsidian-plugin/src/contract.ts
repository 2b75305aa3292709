/**
 * The JSON the engine returns (`memvault --json ...` and `memvault serve`), as
 * TypeScript types with runtime decoders. A response of the wrong shape throws
 * a ContractError naming the field, e.g.
 * `search: hits[0].trust: expected one of system, learned, external, got "x"`.
 * Unknown extra keys are allowed, so the engine can add fields without
 * breaking the plugin. The golden fixtures in ../contract/ are checked
 * against these decoders by tests/contract.test.ts.
 */

import { LIFECYCLES, OUTCOMES, SCOPES, TIERS, TRUSTS, AUTHORITIES } from "./memory";
import type { Authority, Lifecycle, Outcome, Scope, Tier, Trust } from "./memory";

export class ContractError extends Error {
	constructor(message: string) {
		super(message);
		this.name = "ContractError";
	}
}

type Decoder<T> = (value: unknown, where: string) => T;

function describe(value: unknown): string {
	if (value === undefined) return "nothing";
	if (value === null) return "null";
	if (Array.isArray(value)) return "a list";
	if (typeof value === "object") return "an object";
	const shown = JSON.stringify(value);
	return typeof value === "string" ? `"${shown.slice(1, -1).slice(0, 40)}"` : shown;
}

function fail(where: string, expected: string, value: unknown): never {
	throw new ContractError(`${where}: expected ${expected}, got ${describe(value)}`);
}

const str: Decoder<string> = (v, w) => (typeof v === "string" ? v : fail(w, "a string", v));
const num: Decoder<number> = (v, w) => (typeof v === "number" && Number.isFinite(v) ? v : fail(w, "a number", v));
const int: Decoder<number> = (v, w) => (typeof v === "number" && Number.isInteger(v) ? v : fail(w, "a whole number", v));
const bool: Decoder<boolean> = (v, w) => (typeof v === "boolean" ? v : fail(w, "true or false", v));
const anything: Decoder<unknown> = (v) => v;

function oneOf<T extends string | number>(values: readonly T[]): Decoder<T> {
	return (v, w) => ((values as readonly unknown[]).includes(v) ? (v as T) : fail(w, `one of ${values.join(", ")}`, v));
}

function nullable<T>(decode: Decoder<T>): Decoder<T | null> {
	return (v, w) => (v === null ? null : decode(v, w));
}

/** A key that may be missing (decoded as undefined); when present it must decode. */
function optional<T>(decode: Decoder<T>): Decoder<T | undefined> {
	return (v, w) => (v === undefined ? undefined : decode(v, w));
}

function list<T>(decode: Decoder<T>): Decoder<T[]> {
	return (v, w) => (Array.isArray(v) ? v.map((item, n) => decode(item, `${w}[${n}]`)) : fail(w, "a list", v));
}

function isObject(v: unknown): v is Record<string, unknown> {
	return typeof v === "object" && v !== null && !Array.isArray(v);
}

function mapOf<T>(decode: Decoder<T>): Decoder<Record<string, T>> {
	return (v, w) => {
		if (!isObject(v)) fail(w, "an object", v);
		const out: Record<string, T> = {};
		for (const [key, item] of Object.entries(v)) out[key] = decode(item, `${w}.${key}`);
		return out;
	};
}

type Fields<T> = { [K in keyof T]-?: Decoder<T[K]> };

function object<T>(fields: Fields<T>): Decoder<T> {
	return (v, w) => {
		if (!isObject(v)) fail(w, "an object", v);
		const out: Record<string, unknown> = {};
		for (const key of Object.keys(fields) as (keyof T & string)[]) {
			const decoded = fields[key](v[key], w ? `${w}.${key}` : key);
			if (decoded !== undefined) out[key] = decoded;
		}
		return out as T;
	};
}

/** Decode `value` as a `name` response; the error names the response and the field. */
function top<T>(name: string, decode: Decoder<T>): (value: unknown) => T {
	return (value) => {
		try {
			return decode(value, "");
		} catch (error) {
			if (error instanceof ContractError) {
				throw new ContractError(`memvault ${name} response does not match the plugin's contract: `
					+ error.message.replace(/^\.?/, ""));
			}
			throw error;
		}
	};
}

// ---------------------------------------------------------------- search

export interface SearchHit {
	id: string;
	title: string;
	path: string;
	score: number;
	summary: string;
	trigger: string;
	type: string;
	scope: Scope;
	project: string | null;
	trust: Trust;
	authority: Authority;
	lifecycle: Lifecycle;
	tier: Tier;
	snippet: string;
	why: string[];
	base?: number;
	lanes?: Record<string, number>;
	similarity?: Record<string, number>;
	boosts?: Record<string, number>;
	rerank?: Record<string, number>;
	duplicates?: string[];
	conflicts?: string[];
	evidence?: number;
	weak?: boolean;
}

export interface RevivableHit {
	id: string;
	title: string;
	score: number;
	path: string;
	restore: string;
}

export interface SearchResult {
	query: string;
	hits: SearchHit[];
	revivable: RevivableHit[];
	notice: string | null;
	weak_left_out?: number;
}

const searchHit = object<SearchHit>({
	id: str, title: str, path: str, score: num, summary: str, trigger: str, type: str,
	scope: oneOf(SCOPES), project: nullable(str), trust: oneOf(TRUSTS), authority: oneOf(AUTHORITIES),
	lifecycle: oneOf(LIFECYCLES), tier: oneOf(TIERS), snippet: str, why: list(str),
	base: optional(num), lanes: optional(mapOf(int)), similarity: optional(mapOf(num)),
	boosts: optional(mapOf(num)), rerank: optional(mapOf(num)), duplicates: optional(list(str)),
	conflicts: optional(list(str)), evidence: optional(num), weak: optional(bool),
});

export const decodeSearch = top("search", object<SearchResult>({
	query: str,
	hits: list(searchHit),
	revivable: list(object<RevivableHit>({ id: str, title: str, score: num, path: str, restore: str })),
	notice: nullable(str),
	weak_left_out: optional(int),
}));

// ---------------------------------------------------------------- read (show)

export interface ReadLink {
	link: string;
	id: string | null;
}

export interface ReadResult {
	id: string;
	title: string;
	depth: 0 | 1 | 2;
	summary: string;
	trigger: string;
	path: string;
	trashed: boolean;
	detail?: string | null;
	metadata?: Record<string, unknown>;
	links?: ReadLink[];
	body?: string;
	text: string;
}

const readShape = object<ReadResult>({
	id: str, title: str, depth: oneOf([0, 1, 2] as const), summary: str, trigger: str, path: str,
	trashed: bool, detail: optional(nullable(str)), metadata: optional(mapOf(anything)),
	links: optional(list(object<ReadLink>({ link: str, id: nullable(str) }))), body: optional(str), text: str,
});

export const decodeRead = top("read", (value, where): ReadResult => {
	const result = readShape(value, where);
	// Depth 1 adds detail, metadata and links; depth 2 adds the raw body.
	if (result.depth >= 1) {
		if (result.detail === undefined) fail("detail", "a string or null at depth 1 and 2", undefined);
		if (result.metadata === undefined) fail("metadata", "an object at depth 1 and 2", undefined);
		if (result.links === undefined) fail("links", "a list at depth 1 and 2", undefined);
	}
	if (result.depth === 2 && result.body === undefined) fail("body", "a string at depth 2", undefined);
	return result;
});

// ---------------------------------------------------------------- context

export interface ResidentItem {
	id: string;
	title: string;
	text: string;
	why: string[];
}

export interface ManifestItem {
	id: string;
	title: string;
	abstract: string;
	whyApplied: string[];
}

export interface ContextResult {
	task: string;
	project: string | null;
	budget: number;
	used: number;
	application: string | null;
	resident: ResidentItem[];
	manifest: ManifestItem[];
	omitted: number;
	note: string | null;
	markdown: string;
}

export const decodeContext = top("context", object<ContextResult>({
	task: str, project: nullable(str), budget: int, used: int, application: nullable(str),
	resident: list(object<ResidentItem>({ id: str, title: str, text: str, why: list(str) })),
	manifest: list(object<ManifestItem>({ id: str, title: str, abstract: str, whyApplied: list(str) })),
	omitted: int, note: nullable(str), markdown: str,
}));

// ---------------------------------------------------------------- status

export const INDEX_STATES = ["current", "stale", "missing", "unreadable"] as const;
export type IndexState = (typeof INDEX_STATES)[number];

export interface StatusResult {
	vault: string;
	memories: number;
	by_type: Record<string, number>;
	by_lifecycle: Record<string, number>;
	by_tier: Record<string, number>;
	trash: number;
	invalid: string[];
	hot_chars: number;
	hot_budget: number;
	journal_events: number;
	journal_warnings: string[];
	index: string;
	index_state: IndexState;
	embedding_model: string;
}

export const decodeStatus = top("status", object<StatusResult>({
	vault: str, memories: int, by_type: mapOf(int), by_lifecycle: mapOf(int), by_tier: mapOf(int),
	trash: int, invalid: list(str), hot_chars: int, hot_budget: int, journal_events: int,
	journal_warnings: list(str), index: str, index_state: oneOf(INDEX_STATES), embedding_model: str,
}));

// ---------------------------------------------------------------- feedback and forget

export interface FeedbackResult {
	action: string;
	id: string;
	path: string;
	outcome: Outcome;
	old_lifecycle: Lifecycle;
	lifecycle: Lifecycle;
	applied: Record<string, number>;
	last_applied: string | null;
	application: string | null;
	event: string | null;
}

export const decodeFeedback = top("feedback", object<FeedbackResult>({
	action: str, id: str, path: str, outcome: oneOf(OUTCOMES), old_lifecycle: oneOf(LIFECYCLES),
	lifecycle: oneOf(LIFECYCLES), applied: mapOf(int), last_applied: nullable(str),
	application: nullable(str), event: nullable(str),
}));

/** What a forget or correct did (the engine's change_json). */
export interface ChangeResult {
	action: string;
	id: string;
	path: string | null;
	related: string | null;
	event: string | null;
	conflicts: string[];
	/** Overviews that quoted the memory's old text, moved to the trash with it. */
	overviews?: string[];
}

export type ForgetResult = ChangeResult;

const change = object<ChangeResult>({
	action: str, id: str, path: nullable(str), related: nullable(str), event: nullable(str), conflicts: list(str),
	overviews: optional(list(str)),
});

export const decodeForget = top("forget", change);
export const decodeCorrect = top("correct", change);

// ---------------------------------------------------------------- remember (HTTP only; not used by the plugin yet)

export interface RememberResult {
	id: string;
	path: string;
	created: boolean;
	notice: string | null;
}

export const decodeRemember = top("remember", object<RememberResult>({
	id: str, path: str, created: bool, notice: nullable(str),
}));

// ---------------------------------------------------------------- errors (HTTP)

export interface ErrorEnvelope {
	error: { kind: string; message: string };
}

export const decodeErrorEnvelope = top("error", object<ErrorEnvelope>({
	error: object<ErrorEnvelope["error"]>({ kind: str, message: str }),
}));

/** Whether `value` is the HTTP API's error envelope `{"error": {"kind", "message"}}`. */
export function isErrorEnvelope(value: unknown): value is ErrorEnvelope {
	return isObject(value) && isObject(value.error)
		&& typeof value.error.kind === "string" && typeof value.error.message === "string";
}
