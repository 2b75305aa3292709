/**
 * One EngineClient, two transports: HTTP when `memvault serve` runs (it keeps
 * the indexes warm), else the `memvault` CLI. The chooser (EngineRouter) reads
 * the transport setting on every call:
 * - "auto": HTTP first; when the server is not there (no .memvault/serve.json,
 *   connection refused, a reply that is not memvault's) the same call goes to
 *   the CLI. An error the engine itself reports (EngineError) is final.
 * - "http" or "cli": that transport only.
 *
 * Error tree:
 * - EngineError          the engine answered with an error (one line, maybe a kind)
 *   + TransportUnavailable   the transport could not reach the engine at all
 * - ContractError        (contract.ts) the engine answered, but not in the expected shape
 */

import type { ContextResult, FeedbackResult, ForgetResult, ReadResult, SearchResult, StatusResult } from "./contract";
import type { Outcome } from "./memory";

export class EngineError extends Error {
	/** The engine's error kind (e.g. MemoryNotFound) when the HTTP API names it. */
	readonly kind: string | null;

	constructor(message: string, kind: string | null = null) {
		super(message.replace(/\s*\n\s*/g, " ").trim());
		this.name = "EngineError";
		this.kind = kind;
	}
}

/** The transport could not reach the engine; the router may try the other one. */
export class TransportUnavailable extends EngineError {
	constructor(message: string) {
		super(message, "TransportUnavailable");
		this.name = "TransportUnavailable";
	}
}

export interface SearchOptions {
	limit?: number;
	project?: string | null;
	path?: string | null;
	types?: string[];
	trust?: string[];
}

export interface ContextOptions {
	project?: string | null;
	path?: string | null;
	operation?: string | null;
	phase?: string | null;
	kind?: string | null;
	budget?: number | null;
	/** Journal the delivery as an application (default true, as in the engine). */
	record?: boolean;
}

export type Depth = 0 | 1 | 2;

export interface EngineClient {
	status(): Promise<StatusResult>;
	search(query: string, opts?: SearchOptions): Promise<SearchResult>;
	read(id: string, depth?: Depth): Promise<ReadResult>;
	context(task: string, opts?: ContextOptions): Promise<ContextResult>;
	feedback(id: string, outcome: Outcome, application?: string | null): Promise<FeedbackResult>;
	forget(id: string): Promise<ForgetResult>;
}

/** A transport also says where it talks to, for the status bar's tooltip. */
export interface Transport extends EngineClient {
	describe(): string;
}

export type TransportMode = "auto" | "http" | "cli";

export interface RouterOptions {
	http: Transport;
	cli: Transport;
	mode: () => TransportMode;
	/** Called after every call with the transport that answered (or null after a failure). */
	onCall?: (used: Transport | null, error: unknown) => void;
}

export class EngineRouter implements EngineClient {
	/** What answered the last call: shown in the status bar's tooltip. */
	lastTransport: Transport | null = null;

	constructor(private readonly options: RouterOptions) {}

	status(): Promise<StatusResult> {
		return this.route((t) => t.status());
	}

	search(query: string, opts: SearchOptions = {}): Promise<SearchResult> {
		return this.route((t) => t.search(query, opts));
	}

	read(id: string, depth: Depth = 1): Promise<ReadResult> {
		return this.route((t) => t.read(id, depth));
	}

	context(task: string, opts: ContextOptions = {}): Promise<ContextResult> {
		return this.route((t) => t.context(task, opts));
	}

	feedback(id: string, outcome: Outcome, application: string | null = null): Promise<FeedbackResult> {
		return this.route((t) => t.feedback(id, outcome, application));
	}

	forget(id: string): Promise<ForgetResult> {
		return this.route((t) => t.forget(id));
	}

	private async route<T>(call: (transport: Transport) => Promise<T>): Promise<T> {
		const { http, cli } = this.options;
		const mode = this.options.mode();
		const first = mode === "cli" ? cli : http;
		try {
			return this.done(first, await call(first));
		} catch (error) {
			if (mode !== "auto" || first === cli || !(error instanceof TransportUnavailable)) {
				return this.failed(error);
			}
		}
		try {
			return this.done(cli, await call(cli));
		} catch (error) {
			return this.failed(error);
		}
	}

	private done<T>(transport: Transport, value: T): T {
		this.lastTransport = transport;
		this.options.onCall?.(transport, null);
		return value;
	}

	private failed(error: unknown): never {
		this.lastTransport = null;
		this.options.onCall?.(null, error);
		throw error;
	}
}

/** A one-line message for any error from the engine, a transport or the contract. */
export function errorLine(error: unknown): string {
	if (error instanceof Error) return error.message || error.name;
	return String(error);
}
