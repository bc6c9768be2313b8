// Build step: compiles the JSON schemas to validation code once, so no command pays ajv's compile time.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import { Ajv2020 } from "ajv/dist/2020.js";
import standaloneCode from "ajv/dist/standalone/index.js";

import { AJV_OPTIONS, SCHEMA_NAMES, compiledSchemaFile } from "./schema.js";
import { packageRoot } from "./paths.js";

const generate = standaloneCode as unknown as typeof standaloneCode.default;
const ajv = new Ajv2020({ ...AJV_OPTIONS, code: { source: true, esm: false } });
const root = packageRoot();
for (const name of SCHEMA_NAMES) {
  const schema = JSON.parse(readFileSync(join(root, "schemas", `${name}.schema.json`), "utf8")) as object;
  const file = compiledSchemaFile(name);
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, generate(ajv, ajv.compile(schema)));
}
