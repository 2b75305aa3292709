/**
 * The CLI transport: `memvault --vault V --json COMMAND ...` through Node's
 * execFile with an argument array (never a shell), a timeout, a output cap and
 * the vault as working folder. User text always goes where it cannot be read
 * as an option: after `--`, or glued to its option (`--task=TEXT`).
 * On a non-zero exit the CLI prints one line `error: ...` on stderr; that line
 * becomes the EngineError's message.
 */

import { decodeContext, decodeFeedback, decodeForget, decodeRead, decodeSearch, decodeStatus, ContractError }
	from "./contract";
import type { ContextResult, FeedbackResult, ForgetResult, ReadResult, SearchResult, StatusResult } from "./contract";
import { EngineError, TransportUnavailable } from "./client";
import type { ContextOptions, Depth, SearchOptions, Transport } from "./client";
import { OUTCOMES, type Outcome } from "./memory";

export interface ExecFileOptions {
	cwd: string;
	timeout: number;
	maxBuffer: number;
	windowsHide: boolean;
	encoding: "utf8";
}

export interface ExecFileError extends Error {
	code?: string | number | null;
	killed?: boolean;
	signal?: string | null;
}

export type ExecFileCallback = (error: ExecFileError | null, stdout: string, stderr: string) => void;
export type ExecFileFn = (file: string, args: string[], options: ExecFileOptions, callback: ExecFileCallback) => unknown;

export interface CliOptions {
	/** Node's child_process.execFile, loaded only when the CLI is first used. */
	execFile: () => Promise<ExecFileFn>;
	cliPath: () => string;
	vaultPath: () => string;
	timeoutMs: () => number;
	maxBuffer?: number;
}

/** 16 MB: a search or manifest is a few kilobytes; this only stops a runaway process. */
export const MAX_BUFFER = 16 * 1024 * 1024;

function head(vault: string): string[] {
	return ["--vault", vault, "--json"];
}

export function statusArgs(vault: string): string[] {
	return [...head(vault), "status"];
}

export function searchArgs(vault: string, query: string, opts: SearchOptions = {}): string[] {
	const limit = opts.limit ?? 20;
	if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new EngineError(`search limit must be 1 to 1000, got ${limit}`);
	const args = [...head(vault), "search", "--limit", String(limit)];
	if (opts.project) args.push(`--project=${opts.project}`);
	if (opts.path) args.push(`--path=${opts.path}`);
	for (const type of opts.types ?? []) args.push(`--type=${type}`);
	for (const trust of opts.trust ?? []) args.push(`--trust=${trust}`);
	return [...args, "--", query];
}

export function showArgs(vault: string, id: string, depth: Depth = 1): string[] {
	return [...head(vault), "show", "--depth", String(depth), "--", id];
}

export function contextArgs(vault: string, task: string, opts: ContextOptions = {}): string[] {
	const args = [...head(vault), "context", `--task=${task}`];
	if (opts.project) args.push(`--project=${opts.project}`);
	if (opts.path) args.push(`--path=${opts.path}`);
	if (opts.operation) args.push(`--operation=${opts.operation}`);
	if (opts.phase) args.push(`--phase=${opts.phase}`);
	if (opts.kind) args.push(`--kind=${opts.kind}`);
	if (opts.budget !== undefined && opts.budget !== null) args.push(`--budget=${opts.budget}`);
	if (opts.record === false) args.push("--no-record");
	return args;
}

export function feedbackArgs(vault: string, id: string, outcome: Outcome, application: string | null = null): string[] {
	if (!(OUTCOMES as readonly string[]).includes(outcome)) throw new EngineError(`unknown outcome '${String(outcome)}'`);
	const args = [...head(vault), "feedback", "--outcome", outcome];
	if (application) args.push(`--application=${application}`);
	return [...args, "--", id];
}

export function forgetArgs(vault: string, id: string): string[] {
	return [...head(vault), "forget", "--", id];
}

/** The line to show for a failed run: the CLI's last `error: ...` line, else its last stderr line. */
export function errorLineOf(stderr: string, fallback: string): string {
	const lines = stderr.split(/\r?\n/).map((line) => line.trim()).filter((line) => line !== "");
	const errors = lines.filter((line) => line.startsWith("error:"));
	return errors[errors.length - 1] ?? lines[lines.length - 1] ?? fallback;
}

export class CliTransport implements Transport {
	constructor(private readonly options: CliOptions) {}

	describe(): string {
		return `the memvault CLI (${this.options.cliPath()})`;
	}

	async status(): Promise<StatusResult> {
		return this.run(statusArgs(this.vault()), decodeStatus);
	}

	async search(query: string, opts: SearchOptions = {}): Promise<SearchResult> {
		return this.run(searchArgs(this.vault(), query, opts), decodeSearch);
	}

	async read(id: string, depth: Depth = 1): Promise<ReadResult> {
		return this.run(showArgs(this.vault(), id, depth), decodeRead);
	}

	async context(task: string, opts: ContextOptions = {}): Promise<ContextResult> {
		return this.run(contextArgs(this.vault(), task, opts), decodeContext);
	}

	async feedback(id: string, outcome: Outcome, application: string | null = null): Promise<FeedbackResult> {
		return this.run(feedbackArgs(this.vault(), id, outcome, application), decodeFeedback);
	}

	async forget(id: string): Promise<ForgetResult> {
		return this.run(forgetArgs(this.vault(), id), decodeForget);
	}

	private vault(): string {
		return this.options.vaultPath();
	}

	private async run<T>(args: string[], decode: (value: unknown) => T): Promise<T> {
		const file = this.options.cliPath().trim() || "memvault";
		const command = args[3] ?? "";
		const timeout = this.options.timeoutMs();
		const execFile = await this.options.execFile();
		const options: ExecFileOptions = {
			cwd: this.vault(), timeout, maxBuffer: this.options.maxBuffer ?? MAX_BUFFER, windowsHide: true, encoding: "utf8",
		};
		const stdout = await new Promise<string>((resolve, reject) => {
			try {
				execFile(file, args, options, (error, out, err) => {
					if (error) reject(this.failure(error, String(err ?? ""), file, command, timeout));
					else resolve(String(out));
				});
			} catch (error) {
				reject(new EngineError(`cannot run ${file}: ${error instanceof Error ? error.message : String(error)}`));
			}
		});
		let data: unknown;
		try {
			data = JSON.parse(stdout);
		} catch {
			throw new ContractError(`memvault ${command} --json printed something that is not JSON: ${stdout.trim().slice(0, 80)}`);
		}
		return decode(data);
	}

	private failure(error: ExecFileError, stderr: string, file: string, command: string, timeout: number): EngineError {
		if (error.code === "ENOENT" || error.code === "EACCES") {
			return new TransportUnavailable(`cannot run the memvault CLI at '${file}' (${error.code}); set its absolute path `
				+ "in the plugin settings: apps started from the desktop often lack the shell's PATH");
		}
		if (error.code === "ERR_CHILD_PROCESS_STDIO_MAXBUFFER") {
			return new EngineError(`memvault ${command} printed more than ${Math.round((this.options.maxBuffer ?? MAX_BUFFER) / 1048576)} MB`);
		}
		if (error.killed || (error.signal && typeof error.code !== "number")) {
			return new EngineError(`memvault ${command} did not finish within ${Math.round(timeout / 1000)} s`);
		}
		const code = typeof error.code === "number" ? error.code : "?";
		return new EngineError(errorLineOf(stderr, `memvault ${command} failed with exit code ${code}`));
	}
}
