// npm run reference: rewrites the config and manifest reference in docs/reference.md from the schemas.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import { packageRoot } from "../base/paths.js";
import { renderReference, replaceReference } from "./reference.js";

const root = packageRoot();
const schema = (name: string): object => JSON.parse(readFileSync(join(root, "schemas", `${name}.schema.json`), "utf8")) as object;
const file = join(root, "docs", "reference.md");
writeFileSync(file, replaceReference(readFileSync(file, "utf8"), renderReference(schema("config"), schema("manifest"))));
