// Build step: the bin is left runnable by the build itself. npm marks a bin runnable when it first links it, but a
// folder linked again (npm link after npm install, with an earlier link in place) can keep the mode the compiler wrote,
// and uuldana on PATH then answers "Permission denied".
import { chmodSync } from "node:fs";
import { join } from "node:path";

import { packageRoot } from "./paths.js";

chmodSync(join(packageRoot(), "dist", "core", "cli", "main.js"), 0o755);
