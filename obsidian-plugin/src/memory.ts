/**
 * Memories as the panel sees them: frontmatter from Obsidian's metadata cache,
 * read the way vault_engine/memory.py reads it (same keys, same defaults), plus
 * the badges and the order the context director would give them.
 *
 * What is mirrored from vault_engine/context.py (frontmatter only, no task):
 * - score(): lifecycle (proven 300, trial 100), +160 for an explicit memory,
 *   +25 for a project memory (the project counts as one matching selector),
 *   +20 per success, -2 per ignore, -80 per correction or failure. Path, task,
 *   operation and phase selectors need a task, so they add nothing here.
 * - delivery(): the core profile and passive/both memories are always
 *   delivered in full (resident); superseded and external-trust memories are
 *   never delivered; the rest compete by score.
 * - compareForPanel(): resident first (core profile, then passive/both recall),
 *   then by score, then title (case-folded), then id; as the director does,
 *   minus the relevance to the task text, which only the engine can compute.
 */

export const TYPES = [
	"core-profile", "collaboration-policy", "fact", "procedure", "episode", "document", "note",
] as const;
export const SCOPES = ["global", "project"] as const;
export const AUTHORITIES = ["explicit", "inferred"] as const;
export const TRUSTS = ["system", "learned", "external"] as const;
export const LIFECYCLES = ["trial", "proven", "superseded"] as const;
export const RECALLS = ["passive", "active", "both"] as const;
export const TIERS = ["hot", "cold"] as const;
export const OUTCOMES = [
	"used-successfully", "ignored", "overridden", "corrected", "contributed-to-failure",
] as const;

export type Scope = (typeof SCOPES)[number];
export type Authority = (typeof AUTHORITIES)[number];
export type Trust = (typeof TRUSTS)[number];
export type Lifecycle = (typeof LIFECYCLES)[number];
export type Recall = (typeof RECALLS)[number];
export type Tier = (typeof TIERS)[number];
export type Outcome = (typeof OUTCOMES)[number];

/** Top-level folders that never hold current memories: memvault's trash, derived state and journal, Obsidian's trash. */
export const SKIPPED_FOLDERS = ["trash", ".memvault", "journal", ".trash"];

export interface MemoryEntry {
	path: string;
	id: string;
	title: string;
	type: string;
	scope: Scope;
	project: string | null;
	trust: Trust;
	lifecycle: Lifecycle;
	tier: Tier;
	recall: Recall;
	authority: Authority;
	importance: number;
	summary: string;
	trigger: string;
	paths: string[];
	applied: Partial<Record<Outcome, number>>;
	/** Values the engine would reject (it skips such files); shown as a warning badge. */
	problems: string[];
}

/** The badge fields of a memory; search hits from the engine have them too. */
export interface BadgeFields {
	trust: Trust;
	lifecycle: Lifecycle;
	tier: Tier;
}

export interface Badge {
	label: string;
	cls: string;
	title: string;
}

const BADGE_TITLES: Record<string, string> = {
	"trust-system": "Trust: system (written by memvault itself)",
	"trust-learned": "Trust: learned (from the user or a conversation)",
	"trust-external": "Trust: external (from an outside source; never delivered to agents unless asked for)",
	"lifecycle-trial": "Lifecycle: trial (not yet proven)",
	"lifecycle-proven": "Lifecycle: proven",
	"lifecycle-superseded": "Lifecycle: superseded (a newer memory replaces it)",
	"tier-hot": "Tier: hot (resident, counts against the hot budget)",
	"tier-cold": "Tier: cold (searchable)",
};

/** Trust, lifecycle and tier badges, each with CSS classes like `memvault-badge memvault-trust-external`. */
export function badgesFor(memory: BadgeFields): Badge[] {
	return ([["trust", memory.trust], ["lifecycle", memory.lifecycle], ["tier", memory.tier]] as const).map(
		([kind, value]) => ({
			label: value,
			cls: `memvault-badge memvault-${kind}-${value}`,
			title: BADGE_TITLES[`${kind}-${value}`] ?? `${kind}: ${value}`,
		}),
	);
}

export function isMemoryId(value: unknown): value is string {
	return typeof value === "string" && /^m-[a-z0-9._-]+$/.test(value);
}

export function isSkippedPath(path: string): boolean {
	const top = path.split("/")[0] ?? "";
	return SKIPPED_FOLDERS.includes(top);
}

function text(value: unknown): string {
	if (typeof value === "string") return value.trim();
	if (typeof value === "number" || typeof value === "boolean") return String(value);
	return "";
}

function textList(value: unknown): string[] {
	if (typeof value === "string") return value.trim() ? [value.trim()] : [];
	if (Array.isArray(value)) return value.map(text).filter((item) => item !== "");
	return [];
}

function pick<T extends string>(
	fm: Record<string, unknown>, key: string, allowed: readonly T[], fallback: T, problems: string[],
): T {
	const raw = fm[key];
	if (raw === undefined || raw === null || raw === "") return fallback;
	const value = text(raw);
	if ((allowed as readonly string[]).includes(value)) return value as T;
	problems.push(`${key}: '${value}' is not one of ${allowed.join(", ")}`);
	return fallback;
}

function appliedCounts(value: unknown, problems: string[]): Partial<Record<Outcome, number>> {
	const out: Partial<Record<Outcome, number>> = {};
	if (value === undefined || value === null) return out;
	if (typeof value !== "object" || Array.isArray(value)) {
		problems.push("applied: expected a map of outcome counts");
		return out;
	}
	for (const [key, count] of Object.entries(value as Record<string, unknown>)) {
		if (!(OUTCOMES as readonly string[]).includes(key)) {
			problems.push(`applied: unknown outcome '${key}'`);
		} else if (typeof count === "number" && Number.isInteger(count) && count >= 0) {
			out[key as Outcome] = count;
		} else {
			problems.push(`applied.${key}: expected a whole number`);
		}
	}
	return out;
}

/**
 * The memory described by a file's frontmatter, or null when the file is not a
 * memory (no `id` starting with `m-`, no title or type, in a skipped folder, or trashed).
 * Missing keys take the engine's defaults: scope global, authority inferred,
 * trust learned, lifecycle trial, recall active, tier cold, importance 0.5.
 */
export function toMemoryEntry(path: string, fm: Record<string, unknown> | null | undefined): MemoryEntry | null {
	if (!fm || isSkippedPath(path)) return null;
	const id = fm.id;
	const title = text(fm.title);
	const type = text(fm.type);
	if (!isMemoryId(id) || !title || !type) return null;
	if (fm.trashed_at !== undefined && fm.trashed_at !== null && fm.trashed_at !== "") return null;
	const problems: string[] = [];
	const scope = pick(fm, "scope", SCOPES, "global", problems);
	const project = text(fm.project) || null;
	if (scope === "project" && !project) problems.push("scope: 'project' needs a project key");
	let importance = 0.5;
	if (fm.importance !== undefined && fm.importance !== null) {
		if (typeof fm.importance === "number" && fm.importance >= 0 && fm.importance <= 1) importance = fm.importance;
		else problems.push("importance: expected a number from 0 to 1");
	}
	return {
		path,
		id,
		title,
		type,
		scope,
		project,
		trust: pick(fm, "trust", TRUSTS, "learned", problems),
		lifecycle: pick(fm, "lifecycle", LIFECYCLES, "trial", problems),
		tier: pick(fm, "tier", TIERS, "cold", problems),
		recall: pick(fm, "recall", RECALLS, "active", problems),
		authority: pick(fm, "authority", AUTHORITIES, "inferred", problems),
		importance,
		summary: text(fm.summary),
		trigger: text(fm.trigger),
		paths: textList(fm.paths),
		applied: appliedCounts(fm.applied, problems),
		problems,
	};
}

/** A project memory in the director's sense: scope project with a project key (else it counts as global). */
export function isProjectMemory(memory: Pick<MemoryEntry, "scope" | "project">): boolean {
	return memory.scope === "project" && memory.project !== null;
}

const STATE_SCORE: Partial<Record<Lifecycle, number>> = { proven: 300, trial: 100 };

/** The director's score without a task: lifecycle, authority, the project selector, application history. */
export function score(memory: MemoryEntry): number {
	const applied = memory.applied;
	return (STATE_SCORE[memory.lifecycle] ?? 0)
		+ (memory.authority === "explicit" ? 160 : 0)
		+ (isProjectMemory(memory) ? 25 : 0)
		+ 20 * (applied["used-successfully"] ?? 0)
		- 2 * (applied.ignored ?? 0)
		- 80 * ((applied.corrected ?? 0) + (applied["contributed-to-failure"] ?? 0));
}

/** How the context director delivers a memory, before any task is known. */
export type Delivery = "profile" | "passive" | "ranked" | "never";

export function delivery(memory: MemoryEntry): Delivery {
	if (memory.lifecycle === "superseded" || memory.trust === "external") return "never";
	if (memory.type === "core-profile") return "profile";
	if (memory.recall === "passive" || memory.recall === "both") return "passive";
	return "ranked";
}

const DELIVERY_RANK: Record<Delivery, number> = { profile: 0, passive: 1, ranked: 2, never: 3 };

/** Code-point order, as Python compares strings (localeCompare would not). */
function cmp(a: string, b: string): number {
	return a < b ? -1 : a > b ? 1 : 0;
}

/** Resident first (core profile, then passive/both), then score, then title (case-folded), then id. */
export function compareForPanel(a: MemoryEntry, b: MemoryEntry): number {
	return DELIVERY_RANK[delivery(a)] - DELIVERY_RANK[delivery(b)]
		|| score(b) - score(a)
		|| cmp(a.title.toLowerCase(), b.title.toLowerCase())
		|| cmp(a.id, b.id);
}
