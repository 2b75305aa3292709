/**
 * The one-line texts the plugin shows for engine results: the same lines the
 * CLI prints without --json (feedback_line, forget, context's describe), the
 * status bar text, and labels.
 */

import type { ContextResult, FeedbackResult, ForgetResult, StatusResult } from "./contract";
import type { Outcome } from "./memory";

export const UNAVAILABLE = "memvault: engine unavailable";

export function outcomeLabel(outcome: Outcome): string {
	return outcome.replace(/-/g, " ");
}

/** As `memvault feedback` prints it, e.g. `recorded ignored for m-1: proven (ignored 2 times)`. */
export function feedbackLine(result: FeedbackResult): string {
	const count = result.applied[result.outcome] ?? 0;
	const tally = `${outcomeLabel(result.outcome)} ${count} time${count === 1 ? "" : "s"}`;
	if (result.action === "already-recorded") {
		return `already recorded ${result.outcome} for ${result.id} in ${result.application ?? "this application"}: `
			+ `${result.lifecycle} (${tally})`;
	}
	const change = result.old_lifecycle === result.lifecycle
		? result.lifecycle : `${result.old_lifecycle} -> ${result.lifecycle}`;
	const undo = result.action === "superseded" ? `; undo: memvault rollback ${result.id}` : "";
	return `recorded ${result.outcome} for ${result.id}: ${change} (${tally}${undo})`;
}

/** As `memvault forget` prints it. */
export function forgetLine(result: ForgetResult): string {
	if (result.path === null) return `purged ${result.id}`;
	return `moved ${result.id} to ${result.path} (undo: memvault rollback ${result.id})`;
}

/** Share of the hot-tier budget in use, in whole percent. */
export function hotShare(status: StatusResult): number {
	return status.hot_budget > 0 ? Math.round((status.hot_chars / status.hot_budget) * 100) : 0;
}

/** The status bar text, e.g. `memvault: index current · hot 5%`. */
export function statusText(status: StatusResult): string {
	return `memvault: index ${status.index_state} · hot ${hotShare(status)}%`;
}

export function statusTooltip(status: StatusResult, via: string): string {
	const lines = [
		`${status.memories} memories, ${status.trash} in the trash`,
		`Index: ${status.index}`,
		`Hot tier: ${status.hot_chars} of ${status.hot_budget} characters (${hotShare(status)}%)`,
		`Model: ${status.embedding_model}`,
	];
	if (status.invalid.length) lines.push(`Invalid files: ${status.invalid.length} (run memvault status)`);
	if (status.journal_warnings.length) lines.push(`Journal warnings: ${status.journal_warnings.length}`);
	lines.push(`Via ${via}`);
	return lines.join("\n");
}

/** As the CLI's context summary: what was delivered, in how many characters. */
export function manifestSummary(result: ContextResult): string {
	let line = `${result.resident.length} resident, ${result.manifest.length} in the manifest, `
		+ `${result.used} of ${result.budget} characters`;
	if (result.omitted) line += `, ${result.omitted} left out for the budget`;
	if (result.application) line += `; application ${result.application}`;
	return line;
}

/** The manifest without its `<memory-context>` wrapper lines, which a markdown view would drop as unknown HTML. */
export function manifestForDisplay(markdown: string): string {
	return markdown.replace(/^<memory-context>\r?\n/, "").replace(/<\/memory-context>\s*$/, "").trimEnd() + "\n";
}
