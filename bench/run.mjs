// npm run bench — the benchmarks, side by side, as one table with the same rows every run.
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";

import { measureFailover } from "./failover.mjs";
import { measurePassThrough } from "./passthrough.mjs";
import { measureProvidersList } from "./providers-list.mjs";
import { measureReader } from "./reader.mjs";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const rows = [];
rows.push(...(await measureProvidersList(root)));
rows.push(...(await measurePassThrough(root)));
rows.push(...(await measureReader(root)));
rows.push(...(await measureFailover(root)));

const header = ["benchmark", "median", "p95", "baseline", "ratio"];
const table = [header, ...rows.map((r) => [r.name, r.median, r.p95, r.baseline ?? "-", r.ratio ?? "-"])];
const widths = header.map((_, c) => Math.max(...table.map((row) => String(row[c]).length)));
for (const row of table) console.log(row.map((cell, c) => String(cell).padEnd(widths[c])).join("  ").trimEnd());
