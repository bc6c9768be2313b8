// The real Gemini CLI's own chat record, read back by uuldana's adapter: a run started with the session id uuldana
// chooses (the manifest's session_id) holds a conversation on a loopback server — a question answered after a tool
// call, a second one refused with the per-day quota error — and the adapter must read exactly those turns from the
// file the CLI wrote; a second run resumed with the manifest's resume args must read as its own turns only.
import { randomUUID } from "node:crypto";
import http from "node:http";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

import { harnesses } from "./harness.mjs";
import { READY, startHosted, waitOnScreen } from "./host.mjs";
import { geminiAnswer, listenOnLoopback } from "./vendor-api.mjs";

const NOTE = "harbour.txt";
const ASK = { first: "What does the harbour note say", refused: "And when was the lighthouse built", resumed: "Which pier is the lighthouse on" };
const ANSWER = { first: "The note says the saffron lighthouse stands on the north pier.", resumed: "The harbour note puts the saffron lighthouse on the north pier." };
const LIMIT_DIALOG = /Usage limit reached/;

export async function checkTranscript({ root, detections, env, check }) {
  const bin = detections.get("gemini")?.path;
  if (!bin) {
    check(false, "gemini transcript: Gemini CLI installed");
    return;
  }
  const manifest = JSON.parse(readFileSync(join(root, "manifests", "gemini.json"), "utf8"));
  const { default: adapter } = await import(pathToFileURL(join(root, "dist", "providers", "gemini.js")).href);
  const api = await startLoopbackApi();
  try {
    const setup = harnesses.gemini.setup({ base: api.base });
    writeFileSync(join(setup.cwd, NOTE), "The saffron lighthouse stands on the north pier.\n");
    const id = randomUUID();
    const args = manifest.session_id.args.map((arg) => arg.replaceAll("{id}", id));
    const first = await converse({ root, bin, env, setup: { ...setup, args: [...setup.args, ...args] }, asks: [ASK.first, ASK.refused], answer: ANSWER.first });
    check(first.ok, "gemini transcript: the real CLI answers after its tool call, then shows its quota dialog", first.shown);
    const one = adapter.transcript({ cwd: setup.cwd, env: setup.env, started: first.started, ended: first.ended, sessionId: id, prompt: undefined });
    const expected = [{ role: "user", text: ASK.first }, { role: "tool", text: `ReadFile: ${NOTE}` }, { role: "agent", text: ANSWER.first }, { role: "user", text: ASK.refused }];
    check(JSON.stringify(one?.turns) === JSON.stringify(expected), "gemini transcript: the file of the session id uuldana chose holds exactly the run's turns", JSON.stringify(one));
    check(one?.file.startsWith(join(setup.env.HOME, ".gemini", "tmp")) && one.file.endsWith(`-${id.slice(0, 8)}.jsonl`), "gemini transcript: the CLI wrote it under its home, named by that id", one?.file);

    const second = await converse({ root, bin, env, setup: { ...setup, args: [...setup.args, ...manifest.resume.args] }, asks: [ASK.resumed, ASK.refused], answer: ANSWER.resumed });
    check(second.ok, "gemini transcript: the resumed CLI answers again, then shows its quota dialog", second.shown);
    const two = adapter.transcript({ cwd: setup.cwd, env: setup.env, started: second.started, ended: second.ended, sessionId: undefined, prompt: undefined });
    const again = [{ role: "user", text: ASK.resumed }, { role: "tool", text: `ReadFile: ${NOTE}` }, { role: "agent", text: ANSWER.resumed }, { role: "user", text: ASK.refused }];
    check(JSON.stringify(two?.turns) === JSON.stringify(again), "gemini transcript: a resumed run, found by its folder and time, holds only its own turns", JSON.stringify(two));
    check(two?.file === one?.file, "gemini transcript: the resumed run wrote on in the same session's file", `${two?.file}\n${one?.file}`);
  } finally {
    api.close();
  }
}

// One run: the questions typed in turn, the first answered on screen, the last one meeting the quota dialog.
async function converse({ root, bin, env, setup, asks, answer }) {
  const started = new Date();
  const run = await startHosted({ root, id: "gemini", bin, env, setup });
  const screen = async () => (await run.screen.read()).visible.join("\n");
  const type = async (text) => {
    run.agent.write(text);
    await new Promise((r) => setTimeout(r, 400));
    run.agent.write("\r");
  };
  // keys typed while it still loads (a resumed session's history among it) are lost
  let ok = (await waitOnScreen(run, (text) => READY.gemini.test(text), 40_000)) && (await new Promise((r) => setTimeout(r, 2500)), true);
  if (ok) await type(asks[0]);
  ok &&= await waitOnScreen(run, (text) => text.includes(answer), 30_000);
  if (ok) await new Promise((r) => setTimeout(r, 1500));
  if (ok) await type(asks[1]);
  ok &&= await waitOnScreen(run, (text) => LIMIT_DIALOG.test(text), 40_000);
  const shown = (await screen()).split("\n").filter((line) => line.trim()).slice(-12).join("\n");
  await run.stop();
  await run.result;
  return { ok, shown, started, ended: new Date() };
}

// Gemini's API on loopback: a question about the note asks for the tool, the tool's result gets the answer to the
// question it was read for, the refused question gets the per-day quota error, and the model router gets its JSON.
async function startLoopbackApi() {
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => answer(req, res, Buffer.concat(chunks).toString("utf8")));
  });
  return listenOnLoopback(server);
}

function answer(req, res, body) {
  if (req.method !== "POST") {
    res.writeHead(200);
    return res.end();
  }
  const stream = (req.url ?? "").includes(":streamGenerateContent");
  if (!stream) return geminiAnswer(res, JSON.stringify({ reasoning: "a short question", model_choice: "flash" }), { stream });
  let contents = [];
  try {
    contents = JSON.parse(body).contents ?? [];
  } catch {
    // not a request of the CLI's
  }
  const textOf = (content) => (content?.parts ?? []).map((part) => part.text ?? "").join("");
  const asked = contents.filter((content) => content.role === "user" && textOf(content).trim()).at(-1);
  const question = textOf(asked);
  const last = contents.at(-1);
  if (textOf(last).includes(ASK.refused)) return quotaError(res);
  if ((last?.parts ?? []).some((part) => part.functionResponse)) return geminiAnswer(res, question.includes(ASK.resumed) ? ANSWER.resumed : ANSWER.first, { stream });
  if (question.includes(ASK.first) || question.includes(ASK.resumed)) return toolCall(res);
  return geminiAnswer(res, "ok", { stream });
}

// A streamed reply that asks for read_file on the note, after a hidden thought.
function toolCall(res) {
  const parts = [{ thought: true, text: "**Reading the note** I should open the harbour note." }, { functionCall: { name: "read_file", args: { file_path: NOTE } } }];
  const reply = { candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }], usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 12, totalTokenCount: 24 } };
  res.writeHead(200, { "content-type": "text/event-stream" });
  res.end(`data: ${JSON.stringify(reply)}\r\n\r\n`);
}

// Gemini's answer when a per-day quota is used up: its CLI shows the quota dialog and stops trying.
function quotaError(res) {
  res.writeHead(429, { "content-type": "application/json" });
  const violation = { quotaMetric: "generativelanguage.googleapis.com/generate_content_requests", quotaId: "GenerateRequestsPerDayPerProjectPerModel" };
  res.end(JSON.stringify({ error: { code: 429, message: "Quota exceeded for quota metric 'Generate Content API requests per day'", status: "RESOURCE_EXHAUSTED", details: [{ "@type": "type.googleapis.com/google.rpc.QuotaFailure", violations: [violation] }] } }));
}
