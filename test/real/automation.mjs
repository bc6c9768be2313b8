// The vendors' own automation at their real limit screens, offline (the loopback servers of limits.mjs): what the
// built-in manifests and uuldana's paid-offer reading say of the wording the real CLIs draw there. Claude Code
// continues by itself at the reset by default: its screen names that wait in the words its manifest's
// native_wait.waits know. Codex's limit message offers credits to buy: a paid offer, which uuldana leaves unless the
// user's paid_usage allows it.
import { join } from "node:path";

import { reachLimitScreen } from "./limits.mjs";

export async function checkAutomation({ root, detections, env, check }) {
  const { paidOffer } = await import(join(root, "dist", "core", "reader", "paid-offer.js"));
  const { compileLinePatterns } = await import(join(root, "dist", "core", "registry", "patterns.js"));
  const { loadBuiltInManifests } = await import(join(root, "dist", "core", "registry", "registry.js"));
  const manifests = new Map((await loadBuiltInManifests()).map((manifest) => [manifest.id, manifest]));
  for (const id of ["claude-code", "codex"]) {
    const bin = detections.get(id)?.path;
    if (!bin) continue;
    const { run, stopped, visible, shown, close } = await reachLimitScreen({ root, id, bin, env });
    check(stopped, `${id} at its real limit screen (automation): uuldana's reader stops it`, shown);
    if (id === "claude-code") {
      const waits = compileLinePatterns(manifests.get(id).native_wait?.waits ?? []);
      check(visible.some(waits), "claude-code at its real limit screen: its own wait for the reset (on by default) is named by its manifest's native_wait.waits", shown);
    }
    if (id === "codex") {
      const offer = paidOffer(visible.join("\n"));
      check(offer !== undefined, `codex at its real limit screen: its offer of paid usage is read (${offer ?? "none"})`, shown);
    }
    await run.stop();
    await run.result;
    close();
  }
}
