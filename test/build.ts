import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

// Tests run the compiled bin, as users do, so build it once before they start.
export default function setup(): void {
  const root = dirname(dirname(fileURLToPath(import.meta.url)));
  execFileSync(process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", join(root, "tsconfig.json")], {
    stdio: "inherit",
  });
}
