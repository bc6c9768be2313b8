// What the real Claude Code runs from the settings a run is started with (--settings) in a folder the user has not
// trusted yet, and that a project's own status line never reaches those settings. A cloned repository's
// .claude/settings.json names a status-line command that leaves a mark; so does the user's own. Under uuldana's
// settings, neither runs while the trust question is on screen; once the user trusts the folder, the user's command
// runs through uuldana's relay, and the project's never does.
import { existsSync, mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { harnesses } from "./harness.mjs";
import { openBuiltIn, startHosted, waitOnScreen } from "./host.mjs";

const ID = "claude-code";

export async function checkUntrustedSettings({ root, detections, env, check }) {
  const bin = detections.get(ID)?.path;
  if (!bin) {
    check(false, `${ID} untrusted folder: the real CLI is installed`);
    return;
  }
  const say = (ok, text, detail = "") => check(ok, `${ID} untrusted folder: ${text}`, detail);
  const { manifest, hooks } = await openBuiltIn(root, ID);
  const top = realpathSync(mkdtempSync(join(tmpdir(), "uuldana-real-untrusted-")));
  const cwd = join(top, "cloned");
  const marks = { project: join(top, "project-ran"), user: join(top, "user-ran") };
  mkdirSync(join(cwd, ".claude"), { recursive: true });
  writeFileSync(join(cwd, ".claude", "settings.json"), JSON.stringify({ statusLine: { type: "command", command: `echo ran >> '${marks.project}'; echo cloned` } }));
  const setup = harnesses[ID].setup({ cwd: join(top, "elsewhere") });
  // the folder is not among the trusted ones: the setup trusted another
  setup.cwd = cwd;
  mkdirSync(join(setup.env.HOME, ".claude"), { recursive: true });
  writeFileSync(join(setup.env.HOME, ".claude", "settings.json"), JSON.stringify({ statusLine: { type: "command", command: `echo ran >> '${marks.user}'; echo mine` } }));
  const feed = join(top, "status.json");
  const settings = hooks.launchSettings({ cwd, env: { ...env, ...setup.env }, started: new Date(), sessionId: "untrusted", feed });
  const command = settings?.statusLine?.command ?? "";
  say(command.includes(marks.user) && !command.includes(marks.project), "the run's settings carry the user's own status line, never the project's", command);
  const settingsFile = join(top, "settings.json");
  writeFileSync(settingsFile, JSON.stringify(settings), { mode: 0o600 });
  const run = await startHosted({ root, id: ID, bin, env, setup: { ...setup, args: [...setup.args, manifest.quota.settings_flag, settingsFile] } });
  const screen = async () => (await run.screen.read()).visible.filter((line) => line.trim()).slice(-12).join("\n");
  try {
    const asked = await waitOnScreen(run, (text) => /trust this folder/i.test(text), 40_000);
    say(asked, "the real CLI asks whether the folder is trusted", await screen());
    if (!asked) return;
    await new Promise((resolve) => setTimeout(resolve, 3000));
    say(!existsSync(marks.user) && !existsSync(marks.project), "nothing from --settings or the project runs while the trust question is on screen", await screen());
    run.agent.write("\x1b[B");
    await new Promise((resolve) => setTimeout(resolve, 400));
    run.agent.write("\r");
    const ran = await waitOnScreen(run, () => existsSync(marks.user), 20_000);
    say(ran, "once trusted, the user's own status line runs through uuldana's relay", await screen());
    say(!existsSync(marks.project), "the project's status-line command never runs under uuldana's settings", await screen());
  } finally {
    await run.stop();
    await run.result;
  }
}
