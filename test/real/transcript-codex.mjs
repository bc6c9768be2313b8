// The real Codex CLI's rollout file read back by its adapter: a server on loopback plays the Responses API, Codex
// (under uuldana's host, at the ask level) gets a first prompt as its argument, runs one command the server asks
// for, answers, and meets its usage limit on the next message; then it is started again with its native resume and
// answers once more. The transcript hook must give exactly the turns each run held, and the second run's only.
import http from "node:http";
import { join, sep } from "node:path";
import { isDeepStrictEqual } from "node:util";

import { harnesses } from "./harness.mjs";
import { startHosted, waitOnScreen } from "./host.mjs";
import { LIMIT_REPLIES, listenOnLoopback, responsesAnswer } from "./vendor-api.mjs";

const ASK = ["Which colour is the lighthouse on the east pier?", "And how tall is it?", "When was it painted?"];
const ANSWER = ["The east pier lighthouse is painted cobalt blue.", "It was last painted in the spring of 1998."];
const COMMAND = "echo cobalt-paint-log";
const LIMITED = /hit your usage limit/;

export async function checkTranscript({ root, detections, env, check }) {
  const bin = detections.get("codex")?.path;
  if (!bin) {
    check(false, "codex transcript: codex installed");
    return;
  }
  const { default: adapter } = await import(join(root, "dist", "providers", "codex.js"));
  const api = await startApi();
  try {
    const setup = harnesses.codex.setup({ base: api.base });
    const read = (run) => adapter.transcript({ cwd: setup.cwd, env: setup.env, started: run.started, ended: run.ended, sessionId: undefined, prompt: run.prompt });
    const say = (ok, text, detail) => check(ok, `codex transcript: ${text}`, ok ? "" : detail);

    const first = await hold({ root, bin, env, setup, args: [ASK[0]], prompt: ASK[0], steps: [[undefined, new RegExp(ANSWER[0])], [ASK[1], LIMITED]] });
    say(first.held, "the real Codex ran a command, answered and met its usage limit", first.shown);
    const got = read(first);
    const expected = [
      { role: "user", text: ASK[0] },
      { role: "tool", text: `exec: ${COMMAND}` },
      { role: "agent", text: ANSWER[0] },
      { role: "user", text: ASK[1] },
    ];
    say(isDeepStrictEqual(got?.turns, expected), "the hook reads the run's turns from its rollout file, the limit left out", JSON.stringify(got ?? null, null, 1));
    say(got?.file.startsWith(join(setup.env.CODEX_HOME, "sessions") + sep) === true, "the file is in the account's sessions folder", got?.file);

    const resumed = await hold({ root, bin, env, setup, args: ["resume", "--last"], prompt: undefined, steps: [[ASK[2], new RegExp(ANSWER[1])]] });
    say(resumed.held, "the real Codex resumed with resume --last and answered", resumed.shown);
    const again = read(resumed);
    say(again?.file === got?.file, "the resumed run went on in the same rollout file", `${again?.file}\n${got?.file}`);
    const only = [
      { role: "user", text: ASK[2] },
      { role: "agent", text: ANSWER[1] },
    ];
    say(isDeepStrictEqual(again?.turns, only), "the hook reads only the resumed run's turns", JSON.stringify(again ?? null, null, 1));
  } finally {
    api.close();
  }
}

// --- internal ---

// One run under the host: each step types its message (none for a prompt given as the argument) and waits for its
// pattern; then the exit keys. Returns when it started and ended, whether every step came, the last lines.
async function hold({ root, bin, env, setup, args, prompt, steps }) {
  const started = new Date();
  const run = await startHosted({ root, id: "codex", bin, env, setup: { ...setup, args } });
  const screen = async () => (await run.screen.read()).visible.join("\n");
  const waitFor = (test, ms) => waitOnScreen(run, test, ms);
  let held = await waitFor((text) => /Ask Codex to do anything|›/.test(text), 30_000);
  for (const [message, pattern] of steps) {
    if (!held) break;
    if (message) {
      await new Promise((r) => setTimeout(r, 800));
      run.agent.write(message);
      await new Promise((r) => setTimeout(r, 400));
      run.agent.write("\r");
    }
    held = await waitFor((text) => pattern.test(text), 30_000);
  }
  await new Promise((r) => setTimeout(r, 1000));
  const shown = (await screen()).split("\n").filter((line) => line.trim()).slice(-10).join("\n");
  await run.stop();
  await run.result;
  return { started, ended: new Date(), held, shown, prompt };
}

// The Responses API on loopback: the first question gets a command to run, then the answer; the second the usage
// limit; the third its answer; the request for a title a title.
async function startApi() {
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      if (req.method !== "POST" || !req.url?.startsWith("/v1/responses")) {
        res.writeHead(200, { "content-type": "application/json" });
        return res.end("{}");
      }
      let input = [];
      try {
        input = JSON.parse(Buffer.concat(chunks).toString("utf8")).input ?? [];
      } catch {
        // answered as a first question
      }
      const asked = input.filter((item) => item.role === "user").map((item) => JSON.stringify(item.content)).at(-1) ?? "";
      // the request Codex makes to title the session
      if (asked.includes("Generate a concise")) return responsesAnswer(res, "East pier lighthouse");
      if (asked.includes(ASK[1])) return LIMIT_REPLIES.codex(res, Math.floor(Date.now() / 1000) + 5400);
      if (asked.includes(ASK[2])) return responsesAnswer(res, ANSWER[1]);
      if (asked.includes(ASK[0]) && input.at(-1)?.type !== "custom_tool_call_output") return commandCall(res);
      return responsesAnswer(res, ANSWER[0]);
    });
  });
  return listenOnLoopback(server);
}

// A streamed answer that is one call of Codex's exec tool: a script running one shell command.
function commandCall(res) {
  const item = { type: "custom_tool_call", id: "ctc_loopback", call_id: "call_loopback", name: "exec", input: `const run = await tools.exec_command({ cmd: ${JSON.stringify(COMMAND)} });\ntext(run);`, status: "completed" };
  const events = [
    { type: "response.created", response: { id: "resp_call" } },
    { type: "response.output_item.added", output_index: 0, item: { ...item, status: "in_progress", input: "" } },
    { type: "response.output_item.done", output_index: 0, item },
    { type: "response.completed", response: { id: "resp_call", usage: { input_tokens: 12, input_tokens_details: null, output_tokens: 12, output_tokens_details: null, total_tokens: 24 } } },
  ];
  res.writeHead(200, { "content-type": "text/event-stream" });
  res.end(events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join(""));
}
