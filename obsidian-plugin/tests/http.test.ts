import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { RequestUrlParam, RequestUrlResponse } from "obsidian";
import { afterEach, describe, expect, it, vi } from "vitest";
import { CliTransport, type ExecFileFn } from "../src/cli";
import { EngineError, EngineRouter, TransportUnavailable, type TransportMode } from "../src/client";
import { ContractError } from "../src/contract";
import { HttpTransport, SERVE_FILE, parseServeInfo, refusedServeFile, type RequestUrlFn } from "../src/http";

const CONTRACT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "contract");
const fixture = (name: string): string => readFileSync(join(CONTRACT, name), "utf8");
const TOKEN = "a1b2c3d4".repeat(8);
const SERVE = JSON.stringify({ version: 1, host: "127.0.0.1", port: 7788, pid: 4242, token: TOKEN });

function reply(status: number, text: string): RequestUrlResponse {
	return { status, text, headers: {}, arrayBuffer: new ArrayBuffer(0), get json(): unknown { return JSON.parse(text) as unknown; } };
}

/** A requestUrl that records requests and answers with `answer` (or throws it). */
function fakeRequest(answer: RequestUrlResponse | Error): { requests: RequestUrlParam[]; requestUrl: RequestUrlFn } {
	const requests: RequestUrlParam[] = [];
	const requestUrl: RequestUrlFn = (request) => {
		requests.push(request);
		return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
	};
	return { requests, requestUrl };
}

function http(answer: RequestUrlResponse | Error, serveFile: string | null = SERVE, timeoutMs = 30_000) {
	const { requests, requestUrl } = fakeRequest(answer);
	const transport = new HttpTransport({ requestUrl, readServeFile: () => Promise.resolve(serveFile), timeoutMs: () => timeoutMs });
	return { requests, transport };
}

afterEach(() => {
	vi.useRealTimers();
});

describe("HTTP transport", () => {
	it("finds the server in serve.json and sends the token as a bearer credential", async () => {
		const { requests, transport } = http(reply(200, fixture("status.json")));
		const status = await transport.status();
		expect(status.hot_budget).toBe(5000);
		expect(requests).toEqual([{
			url: "http://127.0.0.1:7788/v1/status",
			method: "GET",
			headers: { Authorization: `Bearer ${TOKEN}`, Accept: "application/json" },
			throw: false,
		}]);
		expect(transport.describe()).toBe("memvault serve at http://127.0.0.1:7788");
	});

	it("posts JSON bodies without the options that were not given", async () => {
		const { requests, transport } = http(reply(200, fixture("search.json")));
		await transport.search("nightly builds", { limit: 5, project: null, types: [] });
		expect(requests[0]).toMatchObject({
			url: "http://127.0.0.1:7788/v1/search", method: "POST", contentType: "application/json; charset=utf-8",
		});
		expect(JSON.parse(requests[0]?.body as string)).toEqual({ query: "nightly builds", limit: 5 });
	});

	it("sends every endpoint's documented fields", async () => {
		const cases: [string, (t: HttpTransport) => Promise<unknown>, string, unknown][] = [
			["read.json", (t) => t.read("m-1", 2), "/v1/read", { id: "m-1", depth: 2 }],
			["context.json", (t) => t.context("add a test", { project: "p", path: "tests/x.py", record: false, budget: 3000 }),
				"/v1/context", { task: "add a test", project: "p", path: "tests/x.py", record: false, budget: 3000 }],
			["feedback.json", (t) => t.feedback("m-1", "used-successfully", "e-1"), "/v1/feedback",
				{ id: "m-1", outcome: "used-successfully", application: "e-1" }],
			["forget.json", (t) => t.forget("m-1"), "/v1/forget", { id: "m-1" }],
		];
		for (const [file, call, endpoint, body] of cases) {
			const { requests, transport } = http(reply(200, fixture(file)));
			await call(transport);
			expect(requests[0]?.url).toBe(`http://127.0.0.1:7788${endpoint}`);
			expect(requests[0]?.method).toBe("POST");
			expect(JSON.parse(requests[0]?.body as string)).toEqual(body);
		}
	});

	it("turns the error body into an EngineError with the engine's message and kind", async () => {
		const { transport } = http(reply(404, fixture("error.json")));
		const error = await transport.read("m-00000000000000000000000000").catch((e: unknown) => e);
		expect(error).toBeInstanceOf(EngineError);
		expect(error).not.toBeInstanceOf(TransportUnavailable);
		expect((error as EngineError).message).toBe("no memory with id 'm-00000000000000000000000000'");
		expect((error as EngineError).kind).toBe("MemoryNotFound");
	});

	it("says the server is not there when serve.json is missing, unreadable or unusable", async () => {
		await expect(http(reply(200, "{}"), null).transport.status()).rejects.toThrow(
			new TransportUnavailable(`memvault serve is not running (no ${SERVE_FILE})`));
		const broken = new HttpTransport({
			requestUrl: fakeRequest(reply(200, "{}")).requestUrl,
			readServeFile: () => Promise.reject(new Error("EACCES")),
			timeoutMs: () => 1000,
		});
		await expect(broken.status()).rejects.toBeInstanceOf(TransportUnavailable);
		expect(() => parseServeInfo("not json")).toThrow(TransportUnavailable);
		expect(() => parseServeInfo(SERVE.replace('"version":1', '"version":2'))).toThrow(/version 2, expected 1/);
		expect(() => parseServeInfo(SERVE.replace("7788", "0"))).toThrow(/no valid port/);
		expect(() => parseServeInfo(SERVE.replace(TOKEN, ""))).toThrow(/no token/);
	});

	it("never sends the token to a host that is not this machine", async () => {
		const { requests, transport } = http(reply(200, fixture("status.json")), SERVE.replace("127.0.0.1", "evil.example"));
		await expect(transport.status()).rejects.toThrow(/names host evil.example; only 127.0.0.1, localhost or ::1/);
		expect(requests).toEqual([]);
		const v6 = http(reply(200, fixture("status.json")), SERVE.replace("127.0.0.1", "::1"));
		await v6.transport.status();
		expect(v6.requests[0]?.url).toBe("http://[::1]:7788/v1/status");
	});

	it("treats a refused connection or a reply that is not memvault's as an unreachable server", async () => {
		await expect(http(new Error("net::ERR_CONNECTION_REFUSED")).transport.status())
			.rejects.toThrow(new TransportUnavailable("memvault serve at http://127.0.0.1:7788 is not reachable (net::ERR_CONNECTION_REFUSED)"));
		await expect(http(reply(502, "<html>Bad gateway</html>")).transport.status()).rejects.toBeInstanceOf(TransportUnavailable);
		await expect(http(reply(500, "{}")).transport.status()).rejects.toBeInstanceOf(TransportUnavailable);
	});

	it("rejects a 2xx reply that is not JSON or not the contract's shape", async () => {
		await expect(http(reply(200, "ok")).transport.status()).rejects.toBeInstanceOf(ContractError);
		await expect(http(reply(200, "{}")).transport.status()).rejects.toThrow(/status response .*: vault: expected a string, got nothing/);
	});

	it("gives up after the timeout without falling back (the call may have run)", async () => {
		vi.useFakeTimers();
		const transport = new HttpTransport({
			requestUrl: () => new Promise<RequestUrlResponse>(() => undefined),
			readServeFile: () => Promise.resolve(SERVE),
			timeoutMs: () => 2000,
		});
		const pending = transport.forget("m-1").catch((e: unknown) => e);
		await vi.advanceTimersByTimeAsync(2000);
		const error = await pending;
		expect(error).toBeInstanceOf(EngineError);
		expect(error).not.toBeInstanceOf(TransportUnavailable);
		expect((error as Error).message).toBe("memvault serve at http://127.0.0.1:7788 did not answer within 2 s");
	});
});

describe("the transport chooser", () => {
	function setup(httpAnswer: RequestUrlResponse | Error, serveFile: string | null, mode: TransportMode = "auto") {
		const { requests, transport: httpTransport } = http(httpAnswer, serveFile);
		const cliCalls: string[][] = [];
		const execFile: ExecFileFn = (_file, args, _options, callback) => {
			cliCalls.push(args);
			const command = args[3] ?? "";
			queueMicrotask(() => callback(null, fixture(`${command === "show" ? "read" : command}.json`), ""));
		};
		const cli = new CliTransport({
			execFile: () => Promise.resolve(execFile), cliPath: () => "memvault", vaultPath: () => "/v", timeoutMs: () => 1000,
		});
		const seen: (string | null)[] = [];
		const router = new EngineRouter({
			http: httpTransport, cli, mode: () => mode,
			onCall: (used) => seen.push(used ? used.describe() : null),
		});
		return { requests, cliCalls, router, seen, cli, httpTransport };
	}

	it("uses the server when it answers", async () => {
		const { requests, cliCalls, router, httpTransport } = setup(reply(200, fixture("status.json")), SERVE);
		await router.status();
		expect(requests).toHaveLength(1);
		expect(cliCalls).toEqual([]);
		expect(router.lastTransport).toBe(httpTransport);
	});

	it("falls back to the CLI when serve.json is missing", async () => {
		const { requests, cliCalls, router, cli, seen } = setup(reply(200, "{}"), null);
		const result = await router.search("q", { limit: 3 });
		expect(result.hits.length).toBeGreaterThan(0);
		expect(requests).toEqual([]);
		expect(cliCalls).toEqual([["--vault", "/v", "--json", "search", "--limit", "3", "--", "q"]]);
		expect(router.lastTransport).toBe(cli);
		expect(seen).toEqual(["the memvault CLI (memvault)"]);
	});

	it("falls back to the CLI when the request fails", async () => {
		const { requests, cliCalls, router } = setup(new Error("net::ERR_CONNECTION_REFUSED"), SERVE);
		const result = await router.feedback("m-1", "used-successfully");
		expect(result.outcome).toBe("used-successfully");
		expect(requests).toHaveLength(1);
		expect(cliCalls).toEqual([["--vault", "/v", "--json", "feedback", "--outcome", "used-successfully", "--", "m-1"]]);
	});

	it("does not fall back when the engine itself reports an error", async () => {
		const { cliCalls, router, seen } = setup(reply(404, fixture("error.json")), SERVE);
		await expect(router.read("m-0")).rejects.toThrow("no memory with id");
		expect(cliCalls).toEqual([]);
		expect(router.lastTransport).toBeNull();
		expect(seen).toEqual([null]);
	});

	it("uses only the server, or only the CLI, when told to", async () => {
		const httpOnly = setup(reply(200, "{}"), null, "http");
		await expect(httpOnly.router.status()).rejects.toBeInstanceOf(TransportUnavailable);
		expect(httpOnly.cliCalls).toEqual([]);
		const cliOnly = setup(reply(200, fixture("status.json")), SERVE, "cli");
		await cliOnly.router.status();
		expect(cliOnly.requests).toEqual([]);
		expect(cliOnly.cliCalls).toEqual([["--vault", "/v", "--json", "status"]]);
	});
});

describe("serve.json's owner and mode", () => {
	const stat = (mode: number, uid = 501, file = true) => ({ isFile: () => file, mode: 0o100000 | mode, uid });

	it("believes only this user's file that no one else may read, as memvault serve writes it", () => {
		expect(refusedServeFile(stat(0o600), 501)).toBeNull();
		// A committed serve.json, as git checks it out: a teammate's listener would get the searches and token.
		expect(refusedServeFile(stat(0o644), 501)).toMatch(/may be read by other users/);
		expect(refusedServeFile(stat(0o600, 502), 501)).toMatch(/belongs to another user/);
		expect(refusedServeFile(stat(0o600, 501, false), 501)).toMatch(/not a regular file/);
		expect(refusedServeFile(stat(0o644), null)).toBeNull(); // Windows: no owner or mode to check
	});
});
