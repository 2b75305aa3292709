/**
 * The HTTP transport: `memvault serve` on 127.0.0.1, found through
 * `<vault>/.memvault/serve.json` ({"version": 1, "host", "port", "pid", "token"}),
 * called with Obsidian's requestUrl (no CORS limits, unlike fetch) and the
 * token as a bearer credential. Only loopback hosts are accepted, so the token
 * never leaves the machine.
 */

import type { RequestUrlParam, RequestUrlResponse } from "obsidian";
import { ContractError, decodeContext, decodeFeedback, decodeForget, decodeRead, decodeSearch, decodeStatus,
	isErrorEnvelope } from "./contract";
import { EngineError, TransportUnavailable } from "./client";
import type { ContextOptions, Depth, SearchOptions, Transport } from "./client";
import type { ContextResult, FeedbackResult, ForgetResult, ReadResult, SearchResult, StatusResult } from "./contract";
import type { Outcome } from "./memory";

export const SERVE_FILE = ".memvault/serve.json";
const LOOPBACK = ["127.0.0.1", "localhost", "::1"];

export type RequestUrlFn = (request: RequestUrlParam) => Promise<RequestUrlResponse>;

export interface ServeInfo {
	version: 1;
	host: string;
	port: number;
	pid: number | null;
	token: string;
}

export interface HttpOptions {
	requestUrl: RequestUrlFn;
	/** The text of .memvault/serve.json, or null when it does not exist. */
	readServeFile: () => Promise<string | null>;
	/** Most milliseconds to wait for an answer. */
	timeoutMs: () => number;
}

/** What lstat tells of serve.json (Node's fs.Stats has these). */
export interface ServeFileStat {
	isFile(): boolean;
	mode: number;
	uid: number;
}

/**
 * Why serve.json is not one this user's `memvault serve` wrote (it writes it mode 0600), or null when it
 * may be: a link, another user's file, or one others may read (git checks a committed file out 0644:
 * a teammate's serve.json would get this user's searches and token). `uid` null (Windows): not checked.
 */
export function refusedServeFile(stat: ServeFileStat, uid: number | null): string | null {
	if (uid === null) return null;
	if (!stat.isFile()) return `${SERVE_FILE} is not a regular file`;
	if (stat.uid !== uid) return `${SERVE_FILE} belongs to another user`;
	if ((stat.mode & 0o077) !== 0) return `${SERVE_FILE} may be read by other users, so no server of yours wrote it`;
	return null;
}

/** serve.json as written by `memvault serve`; anything else means "no server". */
export function parseServeInfo(text: string): ServeInfo {
	let data: unknown;
	try {
		data = JSON.parse(text);
	} catch {
		throw new TransportUnavailable(`${SERVE_FILE} is not JSON`);
	}
	if (typeof data !== "object" || data === null) throw new TransportUnavailable(`${SERVE_FILE} is not an object`);
	const info = data as Record<string, unknown>;
	if (info.version !== 1) throw new TransportUnavailable(`${SERVE_FILE} has version ${String(info.version)}, expected 1`);
	const { host, port, pid, token } = info;
	if (typeof host !== "string" || !LOOPBACK.includes(host)) {
		throw new TransportUnavailable(`${SERVE_FILE} names host ${String(host)}; only 127.0.0.1, localhost or ::1 are used`);
	}
	if (typeof port !== "number" || !Number.isInteger(port) || port < 1 || port > 65535) {
		throw new TransportUnavailable(`${SERVE_FILE} has no valid port`);
	}
	if (typeof token !== "string" || token === "") throw new TransportUnavailable(`${SERVE_FILE} has no token`);
	return { version: 1, host, port, pid: typeof pid === "number" ? pid : null, token };
}

/** The body without null or undefined values (the API treats a missing key as "not given"). */
function compact(body: Record<string, unknown>): Record<string, unknown> {
	return Object.fromEntries(Object.entries(body).filter(([, value]) => value !== null && value !== undefined));
}

export class HttpTransport implements Transport {
	private last: ServeInfo | null = null;

	constructor(private readonly options: HttpOptions) {}

	describe(): string {
		return this.last ? `memvault serve at ${this.origin(this.last)}` : "memvault serve";
	}

	async discover(): Promise<ServeInfo> {
		let text: string | null;
		try {
			text = await this.options.readServeFile();
		} catch (error) {
			throw new TransportUnavailable(`cannot read ${SERVE_FILE}: ${error instanceof Error ? error.message : String(error)}`);
		}
		if (text === null) throw new TransportUnavailable(`memvault serve is not running (no ${SERVE_FILE})`);
		this.last = parseServeInfo(text);
		return this.last;
	}

	status(): Promise<StatusResult> {
		return this.call("GET", "/v1/status", null, decodeStatus);
	}

	search(query: string, opts: SearchOptions = {}): Promise<SearchResult> {
		return this.call("POST", "/v1/search", compact({
			query, limit: opts.limit, project: opts.project, path: opts.path,
			types: opts.types?.length ? opts.types : undefined, trust: opts.trust?.length ? opts.trust : undefined,
		}), decodeSearch);
	}

	read(id: string, depth: Depth = 1): Promise<ReadResult> {
		return this.call("POST", "/v1/read", { id, depth }, decodeRead);
	}

	context(task: string, opts: ContextOptions = {}): Promise<ContextResult> {
		return this.call("POST", "/v1/context", compact({
			task, path: opts.path, operation: opts.operation, phase: opts.phase, kind: opts.kind,
			project: opts.project, budget: opts.budget, record: opts.record,
		}), decodeContext);
	}

	feedback(id: string, outcome: Outcome, application: string | null = null): Promise<FeedbackResult> {
		return this.call("POST", "/v1/feedback", compact({ id, outcome, application }), decodeFeedback);
	}

	forget(id: string): Promise<ForgetResult> {
		return this.call("POST", "/v1/forget", { id }, decodeForget);
	}

	private origin(info: ServeInfo): string {
		return `http://${info.host.includes(":") ? `[${info.host}]` : info.host}:${info.port}`;
	}

	private async call<T>(
		method: "GET" | "POST", endpoint: string, body: Record<string, unknown> | null, decode: (value: unknown) => T,
	): Promise<T> {
		const info = await this.discover();
		const where = `memvault serve at ${this.origin(info)}`;
		const request: RequestUrlParam = {
			url: this.origin(info) + endpoint,
			method,
			headers: { Authorization: `Bearer ${info.token}`, Accept: "application/json" },
			throw: false,
		};
		if (body !== null) {
			request.contentType = "application/json; charset=utf-8";
			request.body = JSON.stringify(body);
		}
		const response = await this.send(request, where);
		let data: unknown;
		try {
			data = JSON.parse(response.text);
		} catch {
			if (response.status >= 200 && response.status < 300) {
				throw new ContractError(`${where} answered ${endpoint} with something that is not JSON`);
			}
			throw new TransportUnavailable(`${where} answered HTTP ${response.status}, not memvault's API`);
		}
		if (response.status < 200 || response.status >= 300) {
			if (isErrorEnvelope(data)) throw new EngineError(data.error.message, data.error.kind);
			throw new TransportUnavailable(`${where} answered HTTP ${response.status} without memvault's error body`);
		}
		return decode(data);
	}

	/** The request, or TransportUnavailable when nothing answered; a slow answer is an error, not a fallback. */
	private async send(request: RequestUrlParam, where: string): Promise<RequestUrlResponse> {
		const timeout = this.options.timeoutMs();
		let timer: number | undefined;
		const late = new Promise<never>((_, reject) => {
			timer = window.setTimeout(() => reject(new EngineError(
				`${where} did not answer within ${Math.round(timeout / 1000)} s`)), timeout);
		});
		try {
			return await Promise.race([this.options.requestUrl(request), late]);
		} catch (error) {
			if (error instanceof EngineError) throw error;
			throw new TransportUnavailable(`${where} is not reachable (${error instanceof Error ? error.message : String(error)})`);
		} finally {
			window.clearTimeout(timer);
		}
	}
}
