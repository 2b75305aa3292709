/**
 * Which memories apply to the open note: its project, then the global
 * memories plus that project's, grouped and ordered as the context director
 * would deliver them (see memory.ts). Pure functions over MemoryEntry values.
 */

import { compareForPanel, delivery, isProjectMemory, type MemoryEntry } from "./memory";

export interface ProjectGuess {
	project: string | null;
	/** Why this project was chosen, shown under the panel's heading. */
	reason: string;
}

/** `memories/projects/<slug>/...` or `episodes/projects/<slug>/...`: the slug, else null. */
export function projectSlugOf(path: string): string | null {
	const match = /^(?:memories|episodes)\/projects\/([^/]+)\//.exec(path);
	return match?.[1] ?? null;
}

function parentOf(path: string): string {
	const at = path.lastIndexOf("/");
	return at < 0 ? "" : path.slice(0, at);
}

/** The project key most of `entries` carry (ties: the smallest key), or null. */
function commonProject(entries: MemoryEntry[]): string | null {
	const counts = new Map<string, number>();
	for (const entry of entries) {
		if (entry.project) counts.set(entry.project, (counts.get(entry.project) ?? 0) + 1);
	}
	let best: string | null = null;
	let bestCount = 0;
	for (const [key, count] of counts) {
		if (count > bestCount || (count === bestCount && best !== null && key < best)) {
			best = key;
			bestCount = count;
		}
	}
	return best;
}

/**
 * The project of the open note: the `project` key of the note itself when it
 * is a memory; else the project whose memories live in the note's project
 * folder (`memories/projects/<slug>/` and `episodes/projects/<slug>/`); else the
 * project of the memories in the note's own folder; else none (global only).
 */
export function guessProject(
	activePath: string | null, activeMemory: MemoryEntry | null, entries: MemoryEntry[],
): ProjectGuess {
	if (activePath === null) return { project: null, reason: "No note is open." };
	if (activeMemory?.project) {
		return { project: activeMemory.project, reason: "From the open memory's project key." };
	}
	const slug = projectSlugOf(activePath);
	if (slug !== null) {
		const inFolder = entries.filter((entry) => projectSlugOf(entry.path) === slug);
		const project = commonProject(inFolder);
		if (project) return { project, reason: `From the memories in projects/${slug}.` };
	}
	const folder = parentOf(activePath);
	const siblings = entries.filter((entry) => parentOf(entry.path) === folder);
	const project = commonProject(siblings);
	if (project) return { project, reason: "From the memories in this folder." };
	return { project: null, reason: "No project here: global memories only." };
}

export interface PanelGroup {
	key: "resident" | "ranked" | "never";
	label: string;
	hint: string;
	entries: MemoryEntry[];
	dimmed: boolean;
}

export interface PanelModel {
	project: string | null;
	reason: string;
	groups: PanelGroup[];
	/** Superseded memories in scope that the settings hide. */
	hiddenSuperseded: number;
	total: number;
}

/** Global memories plus the project's (never another project's), grouped and ordered. */
export function buildPanel(entries: MemoryEntry[], guess: ProjectGuess, showSuperseded: boolean): PanelModel {
	const inScope = entries.filter((entry) => !isProjectMemory(entry) || entry.project === guess.project);
	const shown = inScope.filter((entry) => showSuperseded || entry.lifecycle !== "superseded");
	const ordered = [...shown].sort(compareForPanel);
	const resident = ordered.filter((entry) => ["profile", "passive"].includes(delivery(entry)));
	const ranked = ordered.filter((entry) => delivery(entry) === "ranked");
	const never = ordered.filter((entry) => delivery(entry) === "never");
	const groups: PanelGroup[] = [
		{
			key: "resident", label: "Always in context", dimmed: false, entries: resident,
			hint: "The core profile and passive-recall memories: delivered in full with every task.",
		},
		{
			key: "ranked", label: "May apply", dimmed: false, entries: ranked,
			hint: "Ordered by the context director's score: proven over trial, explicit over inferred, "
				+ "project over global, then past outcomes.",
		},
		{
			key: "never", label: "Not delivered", dimmed: true, entries: never,
			hint: "External-trust and superseded memories: the context director never delivers them.",
		},
	];
	return {
		project: guess.project,
		reason: guess.reason,
		groups: groups.filter((group) => group.entries.length > 0),
		hiddenSuperseded: inScope.length - shown.length,
		total: shown.length,
	};
}
