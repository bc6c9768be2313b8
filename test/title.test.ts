import { createRequire } from "node:module";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { TitleFilter } from "../core/host/title.js";
import { bin, linkAgent, makeSandbox, standInManifest, waitFor, type Sandbox } from "./helpers.js";

const OURS = "uuldana · codex · ask";
const format = (agentTitle: string): string => OURS + (agentTitle ? ` · ${agentTitle}` : "");
const title = (agentTitle: string, kind = "0"): string => `\x1b]${kind};${format(agentTitle)}\x07`;
const bytes = (...parts: (string | number[])[]): Buffer =>
  Buffer.concat(parts.map((part) => (typeof part === "string" ? Buffer.from(part, "utf8") : Buffer.from(part))));

// Feeds the chunks through one filter and returns everything it wrote, and the agent title it read.
function feed(chunks: Buffer[]): { out: string; agentTitle: string } {
  const filter = new TitleFilter(format);
  const out = Buffer.concat(chunks.map((chunk) => filter.filter(chunk)));
  filter.end();
  return { out: out.toString("latin1"), agentTitle: filter.agentTitle };
}

// Every way of cutting the input in two (a sample of them for long inputs), and one byte at a time.
function splits(input: Buffer): Buffer[][] {
  const positions = input.length <= 6000 ? Array.from({ length: input.length - 1 }, (_, i) => i + 1) : [1, 2, 3, 4, 5, 6, 7, 65530, 65536, 65539, 65540, 65541, input.length - 1];
  const ways = positions.map((at) => [input.subarray(0, at), input.subarray(at)]);
  if (input.length <= 6000) ways.push([...input].map((byte) => Buffer.from([byte])));
  return ways;
}

const cases: [string, Buffer, string | Buffer, string][] = [
  ["plain text", bytes("hello, world\r\n"), "hello, world\r\n", ""],
  ["a UTF-8 lead byte 0xc2 that no C1 byte follows", bytes("a", [0xc2], "b", [0xc2, 0xa0], "c"), bytes("a", [0xc2], "b", [0xc2, 0xa0], "c"), ""],
  ["text whose UTF-8 holds the bytes 0x9b, 0x9c and 0x9d", bytes("Лампа Нет Über\r\n"), "Лампа Нет Über\r\n", ""],
  ["an OSC 0 title ended by BEL", bytes("a\x1b]0;agent\x07b"), `a${title("agent")}b`, "agent"],
  ["an OSC 2 title ended by ST", bytes("a\x1b]2;agent\x1b\\b"), `a${title("agent", "2")}b`, "agent"],
  ["an OSC 1 icon name", bytes("\x1b]1;icon\x07"), title("icon", "1"), "icon"],
  ["a title number with leading zeros", bytes("\x1b]002;lead\x07"), title("lead", "2"), "lead"],
  ["a title with an empty number", bytes("\x1b];empty\x07"), title("empty"), "empty"],
  ["the old forms l and L", bytes("\x1b]lwindow\x1b\\\x1b]Llabel\x1b\\"), title("window", "2") + title("label", "1"), "label"],
  ["a title ended by another sequence, which stays", bytes("\x1b]0;cut\x1b[1mbold"), `${title("cut")}\x1b[1mbold`, "cut"],
  ["a title abandoned by CAN", bytes("a\x1b]0;gone\x18b"), "ab", ""],
  ["a title introduced and ended by U+009D and U+009C", bytes([0xc2, 0x9d], "2;c1", [0xc2, 0x9c], "x"), `${title("c1", "2")}x`, "c1"],
  ["a title introduced by a raw 0x9d byte and ended by a raw 0x9c", bytes([0x9d], "0;raw", [0x9c], "x"), `${title("raw")}x`, "raw"],
  ["a raw 0x9d title ended by BEL", bytes("a", [0x9d], "0;raw\x07"), `a${title("raw")}`, "raw"],
  ["a title in UTF-8 whose Ü holds 0x9c", bytes("\x1b]0;Über Нет\x07"), title("Über Нет"), "Über Нет"],
  ["a title with control and direction characters", bytes("\x1b]0;a\r\nb\x7f\u202ec\u0085d\x07"), title("abcd"), "abcd"],
  ["a title whose broken UTF-8 lead byte comes just before its BEL", bytes("\x1b]0;a", [0xc2], "\x07b"), `${title("a\ufffd")}b`, "a\ufffd"],
  ["a title restarted by U+009D inside it", bytes("\x1b]0;first", [0xc2, 0x9d], "0;second\x07"), title("first") + title("second"), "second"],
  ["a hyperlink (OSC 8), untouched", bytes("\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\"), "\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\", ""],
  ["a clipboard write (OSC 52) and a folder (OSC 7), untouched", bytes("\x1b]52;c;aGk=\x07\x1b]7;file:///tmp\x07"), "\x1b]52;c;aGk=\x07\x1b]7;file:///tmp\x07", ""],
  ["an over-long title: cut", bytes(`\x1b]0;${"x".repeat(5000)}\x07after`), `${title(`${"x".repeat(200)}…`)}after`, `${"x".repeat(200)}…`],
  [
    "an over-long title that reads like uuldana's own",
    bytes(`\x1b]0;uuldana · codex · full-access${"\n".repeat(5000)}\x07`),
    title("uuldana · codex · full-access…"),
    "uuldana · codex · full-access…",
  ],
  [
    "a title that never ends: swallowed for 64 KiB, then output again",
    bytes(`\x1b]0;abc${"y".repeat(70_000)}`),
    title(`abc${"y".repeat(197)}…`) + "y".repeat(3 + 70_000 - 65_536),
    `abc${"y".repeat(197)}…`,
  ],
  ["pushes and pops of the title stack, every form", bytes("a\x1b[22;0tb\x1b[22;1t\x1b[22;2t\x1b[22tc\x1b[23;0t\x1b[23;1t\x1b[23;2t\x1b[23td\x1b[0022;0te"), "abcde", ""],
  ["pushes and pops as C1 CSI", bytes([0xc2, 0x9b], "22;0ta", [0x9b], "23tb"), "ab", ""],
  ["a push with a carriage return inside, which stays", bytes("a\x1b[22;\r0tb"), "a\rb", ""],
  ["an over-long push", bytes(`a\x1b[22;${"0;".repeat(200)}0tb`), "ab", ""],
  [
    "other window operations and look-alikes, untouched",
    bytes("\x1b[18t\x1b[14t\x1b[8;24;80t\x1b[21t\x1b[22;39m\x1b[23m\x1b[22 t\x1b[?22;0t\x1b[122t\x1b[2;3t"),
    "\x1b[18t\x1b[14t\x1b[8;24;80t\x1b[21t\x1b[22;39m\x1b[23m\x1b[22 t\x1b[?22;0t\x1b[122t\x1b[2;3t",
    "",
  ],
];

describe("the title filter", () => {
  it.each(cases)("%s", (_, input, expected, agentTitle) => {
    const latin1 = (typeof expected === "string" ? Buffer.from(expected, "utf8") : expected).toString("latin1");
    expect(feed([input])).toEqual({ out: latin1, agentTitle });
    for (const chunks of splits(input)) {
      const { out, agentTitle: read } = feed(chunks);
      if (out !== latin1 || read !== agentTitle) {
        throw new Error(`split into ${chunks.map((chunk) => chunk.length).join("+")} bytes: ${JSON.stringify(out.slice(0, 300))}, title ${JSON.stringify(read)}`);
      }
    }
  });

  it("hands back a chunk without escapes as it is", () => {
    const filter = new TitleFilter(format);
    const chunk = Buffer.from("no escape here, Über\r\n");
    expect(filter.filter(chunk)).toBe(chunk);
  });

  it("drops an unfinished sequence when the output ends, and writes what follows", () => {
    const filter = new TitleFilter(format);
    expect(filter.filter(Buffer.from("a\x1b]0;never ended")).toString()).toBe("a");
    filter.end();
    expect(filter.filter(Buffer.from("next run")).toString()).toBe("next run");
    expect(filter.filter(Buffer.from("x\x1b[22;")).toString()).toBe("x");
    filter.end();
    expect(filter.filter(Buffer.from("0t")).toString()).toBe("0t");
  });
});

// The user's terminal for the end-to-end test: a real pseudo-terminal whose bytes are kept exactly as received.
const require = createRequire(import.meta.url);
const pty = require("node-pty") as typeof import("node-pty");
const { Terminal } = require("@xterm/headless") as typeof import("@xterm/headless");

let sandbox: Sandbox;
let child: import("node-pty").IPty | undefined;
beforeEach(() => {
  sandbox = makeSandbox();
});
afterEach(() => {
  if (child) {
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  child = undefined;
  sandbox.cleanup();
});

describe("the title the user's terminal receives", () => {
  it("is uuldana's status line whatever the agent sends, and the title stack is uuldana's alone", async () => {
    linkAgent(sandbox, "title", "title-agent.mjs");
    sandbox.write("config/providers/title.json", standInManifest("title"));
    sandbox.write("config/config.json", { providers: ["title"], auto_detect: false });
    // a terminal that keeps a title stack, with a title of the user's own
    const term = new Terminal({ cols: 100, rows: 30, allowProposedApi: true, windowOptions: { pushTitle: true, popTitle: true } });
    let shownTitle = "";
    term.onTitleChange((text) => (shownTitle = text));
    await new Promise<void>((resolve) => term.write("\x1b]0;the user's own title\x07", resolve));
    const received: Buffer[] = [];
    const spawned = pty.spawn(process.execPath, [bin, "run"], { name: "xterm-256color", cols: 100, rows: 30, cwd: sandbox.project, env: { ...sandbox.env, TERM: "xterm-256color" }, encoding: null });
    child = spawned;
    spawned.onData((data: string | Buffer) => {
      const chunk = Buffer.from(data as Buffer);
      received.push(chunk);
      term.write(chunk);
    });
    const exited = new Promise<number>((resolve) => spawned.onExit(({ exitCode }) => resolve(exitCode)));
    const screen = (): string => {
      const lines: string[] = [];
      for (let y = 0; y < term.buffer.active.length; y++) lines.push(term.buffer.active.getLine(y)?.translateToString(true) ?? "");
      return lines.join("\n");
    };
    await waitFor(() => screen().includes("title agent done"), "the agent to finish its attempts", 15_000);
    await new Promise<void>((resolve) => term.write("", resolve));
    expect(shownTitle).toBe("uuldana · title · ask · raw title");
    spawned.write("q");
    expect(await exited).toBe(0);
    await waitFor(() => screen().includes("exited with code 0"), "uuldana's last line");
    await new Promise<void>((resolve) => term.write("", resolve));
    expect(shownTitle).toBe("the user's own title");

    const all = Buffer.concat(received).toString("latin1");
    const sequences = [...all.matchAll(/\x1b\][0-9lL]*;[^\x07\x1b]*(?:\x07|\x1b\\)|\x1b\[\d*(?:;\d*)*t|[\x9b\x9c\x9d]/g)].map((match) => Buffer.from(match[0], "latin1").toString("utf8"));
    expect(sequences).toEqual([
      "\x1b[22;0t",
      "\x1b]0;uuldana · title · ask\x07",
      "\x1b]0;uuldana · title · ask · agent title\x07",
      "\x1b]0;uuldana · title · ask · uuldana · title · full-access…\x07",
      "\x1b[18t",
      "\x1b]2;uuldana · title · ask · c1 title\x07",
      "\x1b]0;uuldana · title · ask · raw title\x07",
      "\x1b[23;0t",
    ]);
    // the pop comes after the agent's last output and before uuldana's last line
    expect(all.lastIndexOf("\x1b[23;0t")).toBeGreaterThan(all.indexOf("title agent done"));
    expect(all.lastIndexOf("\x1b[23;0t")).toBeLessThan(all.indexOf("exited with code 0"));
    expect(screen()).not.toMatch(/full-access|c1 title|raw title/);
  });
});
