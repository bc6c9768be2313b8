// The real agents driven to their real limit screens, offline: a server on loopback plays the vendor's API and
// answers with its plan-limit error, the real TUI draws its own banner, and uuldana's reader, running in the host,
// must call it a stop with the reset the server gave.
import http from "node:http";
import { join } from "node:path";

import { harnesses } from "./harness.mjs";
import { startHosted } from "./host.mjs";
import { LIMIT_REPLIES } from "./vendor-api.mjs";

const RESET_SECONDS = 5400;

const READY = { codex: /Ask Codex to do anything/, "claude-code": /❯/ };

export async function checkLimitScreens({ root, detections, env, check }) {
  for (const id of Object.keys(LIMIT_REPLIES)) {
    const bin = detections.get(id)?.path;
    if (!bin) continue;
    const { run, events, reset, stopped, shown, close } = await reachLimitScreen({ root, id, bin, env });
    const stop = events.find((event) => event.type === "stop");
    check(stopped, `${id} at its real limit screen: uuldana's reader stops it`, shown);
    if (stop) {
      const off = Math.abs(new Date(stop.verdict.reset_at ?? 0).getTime() - reset * 1000) / 1000;
      check(off <= 120, `${id} at its real limit screen: the reset read is the server's, within 2 minutes (${stop.verdict.reset_at})`, stop.text);
    }
    const ended = await run.stop();
    await run.result;
    check(ended.step !== "SIGKILL", `${id} at its real limit screen: it leaves gracefully (${ended.step})`);
    close();
  }
}

// Drives one real agent to its limit screen on a loopback server that answers with the vendor's plan-limit error:
// the hosted run, the detector's events, the reset the server gave, whether the reader stopped it, its last lines.
export async function reachLimitScreen({ root, id, bin, env }) {
  const { classifyText } = await import(join(root, "dist", "core", "reader", "reader.js"));
  const reset = Math.floor(Date.now() / 1000) + RESET_SECONDS;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      if (req.method === "POST") LIMIT_REPLIES[id](res, reset);
      else {
        res.writeHead(200);
        res.end();
      }
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${server.address().port}`;
  const events = [];
  const run = await startHosted({
    root,
    id,
    bin,
    env,
    setup: harnesses[id].setup({ base }),
    detect: { quietSeconds: 1.5, dismissSeconds: 20, classify: (text) => classifyText(text, { now: new Date(), timeZone: "UTC" }) },
    onDetection: (event) => events.push(event),
  });
  const waitFor = async (test, ms) => {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      if (await test()) return true;
      await new Promise((r) => setTimeout(r, 200));
    }
    return false;
  };
  const ready = await waitFor(async () => READY[id].test((await run.screen.read()).visible.join("\n")), 30_000);
  run.agent.write("hello");
  await new Promise((r) => setTimeout(r, 400));
  run.agent.write("\r");
  const stopped = ready && (await waitFor(() => events.some((event) => event.type === "stop"), 40_000));
  const visible = (await run.screen.read()).visible;
  const shown = visible.filter((line) => line.trim()).slice(-10).join("\n");
  return { run, events, reset, stopped, visible, shown, close: () => server.close() };
}
