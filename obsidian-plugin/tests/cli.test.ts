import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { CliTransport, MAX_BUFFER, errorLineOf, type ExecFileError, type ExecFileFn, type ExecFileOptions } from "../src/cli";
import { EngineError, TransportUnavailable } from "../src/client";
import { ContractError } from "../src/contract";

const CONTRACT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "contract");
const fixture = (name: string): string => readFileSync(join(CONTRACT, name), "utf8");

interface Call {
	file: string;
	args: string[];
	options: ExecFileOptions;
}

interface Outcome {
	error?: ExecFileError | null;
	stdout?: string;
	stderr?: string;
}

/** An execFile that records each call and answers with `outcome`. */
function fakeExec(outcome: Outcome): { calls: Call[]; execFile: ExecFileFn } {
	const calls: Call[] = [];
	const execFile: ExecFileFn = (file, args, options, callback) => {
		calls.push({ file, args, options });
		queueMicrotask(() => callback(outcome.error ?? null, outcome.stdout ?? "", outcome.stderr ?? ""));
	};
	return { calls, execFile };
}

function transport(outcome: Outcome, cliPath = "/opt/memvault/bin/memvault"): { calls: Call[]; cli: CliTransport } {
	const { calls, execFile } = fakeExec(outcome);
	const cli = new CliTransport({
		execFile: () => Promise.resolve(execFile),
		cliPath: () => cliPath,
		vaultPath: () => "/home/you/My Vault",
		timeoutMs: () => 30_000,
	});
	return { calls, cli };
}

function exitError(code: number | string, extra: Partial<ExecFileError> = {}): ExecFileError {
	return Object.assign(new Error(`Command failed with ${code}`), { code, ...extra });
}

const V = ["--vault", "/home/you/My Vault", "--json"];

describe("CLI transport: the argument array", () => {
	it("runs status with the vault, --json, the timeout, the output cap and the vault as working folder", async () => {
		const { calls, cli } = transport({ stdout: fixture("status.json") });
		const status = await cli.status();
		expect(status.index_state).toBe("current");
		expect(calls).toEqual([{
			file: "/opt/memvault/bin/memvault",
			args: [...V, "status"],
			options: { cwd: "/home/you/My Vault", timeout: 30_000, maxBuffer: MAX_BUFFER, windowsHide: true, encoding: "utf8" },
		}]);
	});

	it("puts the search query after -- so it is never read as an option", async () => {
		const { calls, cli } = transport({ stdout: fixture("search.json") });
		await cli.search("--help me; rm -rf /", { limit: 5, project: "github.com/acme/api" });
		expect(calls[0]?.args).toEqual([...V, "search", "--limit", "5", "--project=github.com/acme/api", "--", "--help me; rm -rf /"]);
	});

	it("passes every search filter, glued to its option", async () => {
		const { calls, cli } = transport({ stdout: fixture("search.json") });
		await cli.search("q", { path: "-x/y.py", types: ["fact", "procedure"], trust: ["any"] });
		expect(calls[0]?.args).toEqual([...V, "search", "--limit", "20", "--path=-x/y.py", "--type=fact",
			"--type=procedure", "--trust=any", "--", "q"]);
	});

	it("shows a memory at a depth, the id after --", async () => {
		const { calls, cli } = transport({ stdout: fixture("read.json") });
		const read = await cli.read("m-01m8qy9wvxrhn24hxpmwx6jr0x", 2);
		expect(read.body).toContain("fake_queue");
		expect(calls[0]?.args).toEqual([...V, "show", "--depth", "2", "--", "m-01m8qy9wvxrhn24hxpmwx6jr0x"]);
	});

	it("asks for a context manifest with the task glued to --task", async () => {
		const { calls, cli } = transport({ stdout: fixture("context.json") });
		const result = await cli.context("-v add a test", { project: "github.com/example/webapp", path: "tests/x.py", record: false });
		expect(result.markdown).toContain("<memory-context>");
		expect(calls[0]?.args).toEqual([...V, "context", "--task=-v add a test", "--project=github.com/example/webapp",
			"--path=tests/x.py", "--no-record"]);
	});

	it("passes the optional context selectors and the budget, and records by default", async () => {
		const { calls, cli } = transport({ stdout: fixture("context.json") });
		await cli.context("t", { operation: "edit", phase: "build", kind: "test", budget: 0 });
		expect(calls[0]?.args).toEqual([...V, "context", "--task=t", "--operation=edit", "--phase=build", "--kind=test", "--budget=0"]);
	});

	it("reports an outcome and forgets, the id after --", async () => {
		const feedback = transport({ stdout: fixture("feedback.json") });
		await feedback.cli.feedback("-m-1", "corrected");
		expect(feedback.calls[0]?.args).toEqual([...V, "feedback", "--outcome", "corrected", "--", "-m-1"]);
		await feedback.cli.feedback("m-1", "ignored", "e-9");
		expect(feedback.calls[1]?.args).toEqual([...V, "feedback", "--outcome", "ignored", "--application=e-9", "--", "m-1"]);
		const forget = transport({ stdout: fixture("forget.json") });
		await forget.cli.forget("m-2");
		expect(forget.calls[0]?.args).toEqual([...V, "forget", "--", "m-2"]);
	});

	it("refuses an unknown outcome or a bad limit before running anything", async () => {
		const { calls, cli } = transport({ stdout: "{}" });
		await expect(cli.feedback("m-1", "great" as "ignored")).rejects.toThrow("unknown outcome 'great'");
		await expect(cli.search("q", { limit: 0 })).rejects.toThrow("search limit must be 1 to 1000, got 0");
		expect(calls).toEqual([]);
	});
});

describe("CLI transport: errors", () => {
	it("turns a non-zero exit into an EngineError with the CLI's error line", async () => {
		const { cli } = transport({
			error: exitError(1),
			stderr: "warning: the index is stale\nerror: no memory with id 'm-nope'\n",
		});
		const error = await cli.read("m-nope").catch((e: unknown) => e);
		expect(error).toBeInstanceOf(EngineError);
		expect(error).not.toBeInstanceOf(TransportUnavailable);
		expect((error as Error).message).toBe("error: no memory with id 'm-nope'");
	});

	it("uses the last stderr line, or the exit code, when there is no error line", () => {
		expect(errorLineOf("Traceback\nKeyError: 'x'\n", "fallback")).toBe("KeyError: 'x'");
		expect(errorLineOf("", "memvault status failed with exit code 70")).toBe("memvault status failed with exit code 70");
	});

	it("says how to fix a CLI that cannot be found", async () => {
		const { cli } = transport({ error: exitError("ENOENT") }, "memvault");
		const error = await cli.status().catch((e: unknown) => e);
		expect(error).toBeInstanceOf(TransportUnavailable);
		expect((error as Error).message).toMatch(/cannot run the memvault CLI at 'memvault' \(ENOENT\); set its absolute path/);
	});

	it("reports a run killed by the timeout", async () => {
		const { cli } = transport({ error: exitError("", { killed: true, signal: "SIGTERM", code: null }) });
		await expect(cli.status()).rejects.toThrow("memvault status did not finish within 30 s");
	});

	it("reports output past the cap", async () => {
		const { cli } = transport({ error: exitError("ERR_CHILD_PROCESS_STDIO_MAXBUFFER") });
		await expect(cli.search("q")).rejects.toThrow("memvault search printed more than 16 MB");
	});

	it("rejects output that is not JSON, or JSON of the wrong shape", async () => {
		await expect(transport({ stdout: "Traceback (most recent call last)" }).cli.status())
			.rejects.toThrow(/memvault status --json printed something that is not JSON: Traceback/);
		const wrong = transport({ stdout: JSON.stringify({ ...JSON.parse(fixture("status.json")) as object, index_state: "fresh" }) });
		const error = await wrong.cli.status().catch((e: unknown) => e);
		expect(error).toBeInstanceOf(ContractError);
		expect((error as Error).message).toBe("memvault status response does not match the plugin's contract: "
			+ "index_state: expected one of current, stale, missing, unreadable, got \"fresh\"");
	});

	it("turns an execFile that throws (e.g. a NUL in an argument) into an EngineError", async () => {
		const cli = new CliTransport({
			execFile: () => Promise.resolve(() => { throw new TypeError("argument must be a string without null bytes"); }),
			cliPath: () => "memvault", vaultPath: () => "/v", timeoutMs: () => 1000,
		});
		await expect(cli.search("a\u0000b")).rejects.toThrow("cannot run memvault: argument must be a string without null bytes");
	});
});
