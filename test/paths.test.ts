import { join } from "node:path";

import { describe, expect, it } from "vitest";

import { expandHome, resolveDirs } from "../core/base/paths.js";

describe("where uuldana keeps its files", () => {
  it("prefers UULDANA_* over XDG over the platform's convention", () => {
    expect(resolveDirs({ HOME: "/h", UULDANA_CONFIG_DIR: "/c", XDG_CONFIG_HOME: "/x", XDG_DATA_HOME: "/xd" }, "linux")).toEqual({
      config: "/c",
      data: "/xd/uuldana",
      cache: "/h/.cache/uuldana",
    });
    expect(resolveDirs({ HOME: "/h" }, "linux")).toEqual({
      config: "/h/.config/uuldana",
      data: "/h/.local/share/uuldana",
      cache: "/h/.cache/uuldana",
    });
    expect(resolveDirs({ HOME: "/h" }, "darwin")).toEqual({
      config: "/h/Library/Application Support/uuldana",
      data: "/h/Library/Application Support/uuldana",
      cache: "/h/Library/Caches/uuldana",
    });
    expect(resolveDirs({ USERPROFILE: "/u", APPDATA: "/roam", LOCALAPPDATA: "/local" }, "win32")).toEqual({
      config: join("/roam", "uuldana", "Config"),
      data: join("/local", "uuldana", "Data"),
      cache: join("/local", "uuldana", "Cache"),
    });
  });

  it("expands a leading ~/ and nothing else", () => {
    expect(expandHome("~/a/b", { HOME: "/h" })).toBe("/h/a/b");
    expect(expandHome("~", { HOME: "/h" })).toBe("/h");
    expect(expandHome("a/~/b", { HOME: "/h" })).toBe("a/~/b");
    expect(expandHome("~user/x", { HOME: "/h" })).toBe("~user/x");
  });
});
