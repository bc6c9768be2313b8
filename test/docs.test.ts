import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize } from "node:path";

import { beforeAll, describe, expect, it } from "vitest";

import { npmEnv, root, runFile } from "./helpers.js";

// What a reader of the package meets: the README, the pages of docs/ and CONTRIBUTING.md, by path from the root.
const pages = ["README.md", "CONTRIBUTING.md", ...readdirSync(join(root, "docs")).filter((file) => file.endsWith(".md")).map((file) => `docs/${file}`)];
const text = (page: string): string => readFileSync(join(root, page), "utf8");

// A page's text outside its code blocks and inline code, where a link or a heading is one.
function prose(page: string): string {
  return text(page).replace(/^ *```[\s\S]*?^ *```$/gm, "").replace(/`[^`\n]*`/g, "");
}

// The anchors of a page's headings, as GitHub and npm make them.
function anchors(page: string): Set<string> {
  const found = new Set<string>();
  for (const [, heading] of prose(page).matchAll(/^#{1,6} +(.+)$/gm)) {
    found.add(heading!.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-"));
  }
  return found;
}

// Every relative link of a page: its target from the root, and the anchor after "#" when it has one.
function links(page: string): { target: string; anchor: string | undefined; raw: string }[] {
  return [...prose(page).matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((raw) => !/^[a-z]+:/i.test(raw))
    .map((raw) => {
      const [path, anchor] = raw.split("#") as [string, string | undefined];
      return { target: path ? normalize(join(dirname(page), path)).replace(/\/$/, "") : page, anchor, raw };
    });
}

describe("the README and docs/", () => {
  // the files npm puts in the package, as a user installs it
  let packed: string[] = [];
  beforeAll(async () => {
    const run = await runFile("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: root, env: npmEnv() });
    expect(run.code, run.stderr).toBe(0);
    packed = (JSON.parse(run.stdout) as { files: { path: string }[] }[])[0]!.files.map((file) => file.path);
  }, 120_000);

  it.each(pages)("%s: every relative link leads to a file the package ships, and to a heading that is there", (page) => {
    expect(packed).toContain(page);
    for (const { target, anchor, raw } of links(page)) {
      expect(existsSync(join(root, target)), `${page}: ${raw}`).toBe(true);
      const shipped = statSync(join(root, target)).isDirectory() ? packed.some((file) => file.startsWith(`${target}/`)) : packed.includes(target);
      expect(shipped, `${page}: ${raw} is not in the package`).toBe(true);
      if (anchor !== undefined) expect([...anchors(target)], `${page}: ${raw}`).toContain(anchor);
    }
  });

  it("keeps the README short enough to lead: under 300 lines", () => {
    expect(text("README.md").split("\n").length).toBeLessThan(300);
  });

  it("lists every page of docs/ on its contents page, which the README links", () => {
    const contents = links("docs/README.md").map(({ target }) => target);
    for (const page of pages.filter((page) => page.startsWith("docs/") && page !== "docs/README.md")) expect(contents, page).toContain(page);
    expect(links("README.md").map(({ target }) => target)).toContain("docs/README.md");
  });

  it("gives the corpus's sizes as the corpus has them (docs/limits.md)", () => {
    const read = (name: string): { agent: string }[] =>
      readFileSync(join(root, "test", "corpus", name), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { agent: string });
    const stops = read("stop.jsonl");
    const others = read("not-stop.jsonl");
    const agents = (lines: { agent: string }[]): number => new Set(lines.map((line) => line.agent)).size;
    const said = /(\d+) lines that must stop \((\d+) agents,[^)]*\) and (\d+) that must not \((\d+) agents in all\)/.exec(text("docs/limits.md").replace(/\s+/g, " "));
    expect(said, "docs/limits.md states the corpus's sizes").not.toBeNull();
    expect(said!.slice(1).map(Number)).toEqual([stops.length, agents(stops), others.length, agents([...stops, ...others])]);
  });
});
