// Runs the test suite and ends with the lines CI reads: one "failed: <file> > <test>" line per failed test (or
// "failed: <file>" for a file that failed outside any test), then "N passed, N failed".
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
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
const failures = [];
try {
  const data = JSON.parse(readFileSync(report, "utf8"));
  passed = data.numPassedTests;
  for (const file of data.testResults) {
    const name = relative(root, file.name);
    const tests = file.assertionResults.filter((test) => test.status === "failed");
    for (const test of tests) failures.push(`${name} > ${[...test.ancestorTitles, test.title].join(" > ")}`);
    if (file.status === "failed" && tests.length === 0) failures.push(name);
  }
} catch {
  failures.push("no test report (vitest did not finish)");
}
// vitest failing outside any file (the build in its global setup, say) is a failure the lines must show
if (run.status !== 0 && failures.length === 0) failures.push(`vitest exited with ${run.status ?? run.signal}`);
rmSync(folder, { recursive: true, force: true });
for (const failure of failures) console.log(`failed: ${failure}`);
console.log(`${passed} passed, ${failures.length} failed`);
process.exitCode = run.status === 0 && failures.length === 0 ? 0 : 1;
