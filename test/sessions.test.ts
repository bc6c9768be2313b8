import { afterAll, describe, expect, it } from "vitest";

import { readJournal } from "../core/session/journal.js";
import { makeSandbox } from "./helpers.js";

const sandbox = makeSandbox();
afterAll(() => sandbox.cleanup());

describe("session journals", () => {
  it("are read past a line torn by a crash", () => {
    const file = sandbox.write(
      "data/sessions/0zz0000abc/journal.jsonl",
      [
        JSON.stringify({ at: "2026-11-30T12:00:00.000Z", type: "session-start", cwd: "/w", pid: 999999999 }),
        JSON.stringify({ at: "2026-11-30T12:00:01.000Z", type: "run-start", entry: "codex", level: "ask", argv: ["codex"] }),
        '{"at":"2026-11-30T12:00:02.000Z","type":"us',
      ].join("\n"),
    );
    expect(readJournal(file).map((event) => event.type)).toEqual(["session-start", "run-start"]);
  });

  it("are listed newest first; one without an end whose process is gone was interrupted", async () => {
    sandbox.write("data/sessions/0zz0000abd/journal.jsonl", [JSON.stringify({ at: "2026-11-30T13:00:00.000Z", type: "session-start", cwd: "/x", pid: process.pid }), JSON.stringify({ at: "2026-11-30T13:05:00.000Z", type: "session-end", exit_code: 3 })].join("\n") + "\n");
    const run = await sandbox.run(["sessions", "--json"]);
    expect(JSON.parse(run.stdout)).toEqual([
      { id: "0zz0000abd", started: "2026-11-30T13:00:00.000Z", cwd: "/x", runs: [], state: "ended", exit_code: 3 },
      { id: "0zz0000abc", started: "2026-11-30T12:00:00.000Z", cwd: "/w", runs: ["codex"], state: "interrupted", exit_code: null },
    ]);
    expect((await sandbox.run(["sessions", "show", "0zz0000abc"])).stdout).toBe(
      "session 0zz0000abc · started 2026-11-30 12:00 UTC · /w · interrupted\n12:00  codex started at ask\n",
    );
  });

  it("name a limit's kind in the history only when it is known", async () => {
    const at = "2026-11-30T14:00:00.000Z";
    const limit = (entry: string, kind: string): string => JSON.stringify({ at, type: "limit", entry, source: "inferred", kind, text: `${entry} is out` });
    sandbox.write("data/sessions/0zz0000abe/journal.jsonl", [JSON.stringify({ at, type: "session-start", cwd: "/y", pid: 999999999 }), limit("claude-code", "weekly"), limit("codex", "unknown")].join("\n") + "\n");
    expect((await sandbox.run(["sessions", "show", "0zz0000abe"])).stdout.split("\n").slice(1, 3)).toEqual([
      "14:00  claude-code: usage limit (weekly, inferred): claude-code is out",
      "14:00  codex: usage limit (inferred): codex is out",
    ]);
  });

  it("exits 2 for a session that does not exist", async () => {
    expect(await sandbox.run(["sessions", "show", "nosuch"])).toEqual({
      code: 2,
      stdout: "",
      stderr: 'uuldana: no session "nosuch" [E_USAGE]\nhint: run "uuldana sessions" to see the sessions\n',
    });
  });

  it("with --json, also prints the error as one JSON object on stdout", async () => {
    expect(await sandbox.run(["sessions", "show", "nosuch", "--json"])).toEqual({
      code: 2,
      stdout: [
        "{",
        '  "error": {',
        '    "code": "E_USAGE",',
        '    "message": "no session \\"nosuch\\"",',
        '    "details": [],',
        '    "hint": "run \\"uuldana sessions\\" to see the sessions",',
        '    "cause": []',
        "  }",
        "}",
        "",
      ].join("\n"),
      stderr: 'uuldana: no session "nosuch" [E_USAGE]\nhint: run "uuldana sessions" to see the sessions\n',
    });
  });
});
