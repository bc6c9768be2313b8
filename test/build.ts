import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

// Tests run the compiled bin, as users do, so build it once before they start (the same steps as npm run build).
export default function setup(): void {
  const root = dirname(dirname(fileURLToPath(import.meta.url)));
  const run = (args: string[]): void => void execFileSync(process.execPath, args, { cwd: root, stdio: "inherit" });
  run([join(root, "node_modules", "typescript", "bin", "tsc"), "-p", join(root, "tsconfig.json")]);
  run([join(root, "dist", "core", "base", "schema-build.js")]);
  run([join(root, "dist", "core", "base", "bin-build.js")]);
}
