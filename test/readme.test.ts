import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

import { describe, expect, it } from "vitest";

import { LEVELS } from "../core/levels.js";
import type { Manifest } from "../core/types.js";
import { root } from "./helpers.js";

const readme = readFileSync(join(root, "README.md"), "utf8");

describe("README", () => {
  it("shows each built-in provider's flags per level exactly as the manifests have them", () => {
    const manifests = readdirSync(join(root, "manifests"))
      .sort()
      .map((file) => JSON.parse(readFileSync(join(root, "manifests", file), "utf8")) as Manifest);
    const cell = (flags: { args?: string[]; env?: Record<string, string> } | undefined): string => {
      if (!flags) return "refused";
      const env = Object.keys(flags.env ?? {}).map((name) => `${name}=…`);
      return `\`${[...(flags.args ?? []), ...env].join(" ")}\``;
    };
    const table = [
      `| provider | ${LEVELS.join(" | ")} |`,
      `|${" --- |".repeat(LEVELS.length + 1)}`,
      ...manifests.map((m) => `| ${m.id} | ${LEVELS.map((level) => cell(m.levels?.[level])).join(" | ")} |`),
    ].join("\n");
    expect(readme).toContain(table);
  });

  it("lists every source file in its project structure", () => {
    for (const file of readdirSync(join(root, "core"))) expect(readme).toContain(`core/${file} `);
  });

  it("keeps the Quick start to the two commands CI runs", () => {
    const quick = /## Quick start[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(quick).toBe("npm ci && npm start\nnpm test\n");
    const ci = readFileSync(join(root, ".ci", "run"), "utf8");
    expect(ci).toContain("npm ci && npm start");
    expect(ci).toContain("step test npm test");
  });
});
