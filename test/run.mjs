// Runs the test suite and ends with the line CI reads: "N passed, N failed".
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const folder = mkdtempSync(join(tmpdir(), "uuldana-report-"));
const report = join(folder, "report.json");
const vitest = join(root, "node_modules", "vitest", "vitest.mjs");
const run = spawnSync(
  process.execPath,
  [vitest, "run", "--reporter=default", "--reporter=json", `--outputFile=${report}`, ...process.argv.slice(2)],
  { cwd: root, stdio: "inherit" },
);
let passed = 0;
let failed = 0;
try {
  const data = JSON.parse(readFileSync(report, "utf8"));
  passed = data.numPassedTests;
  const brokenFiles = data.testResults.filter((file) => file.status === "failed" && file.assertionResults.length === 0);
  failed = data.numFailedTests + brokenFiles.length;
} catch {
  failed = Math.max(failed, 1);
}
// vitest failing outside any test (the build in its global setup, say) is a failure the line must show
if (run.status !== 0 && failed === 0) failed = 1;
rmSync(folder, { recursive: true, force: true });
console.log(`${passed} passed, ${failed} failed`);
process.exitCode = run.status === 0 && failed === 0 ? 0 : 1;
