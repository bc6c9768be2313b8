import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

import type { ErrorObject, Options, ValidateFunction } from "ajv/dist/2020.js";

import { packageRoot } from "./paths.js";
import { closestWord } from "./suggest.js";

export const SCHEMA_NAMES = ["manifest", "config"] as const;
export type SchemaName = (typeof SCHEMA_NAMES)[number];

// The options of uuldana's one ajv instance, shared by the build step that compiles the schemas.
export const AJV_OPTIONS: Options = { allErrors: true, strict: true, strictTypes: false, strictRequired: false, verbose: true, logger: false };

// One problem found in a JSON document, with everything needed to fix it.
export interface Issue {
  pointer: string;
  message: string;
  value?: unknown;
  allowed?: string;
  hint?: string;
}

type JsonSchema = { [key: string]: unknown };

const compiled = new Map<SchemaName, { schema: JsonSchema; validate: ValidateFunction }>();

// Validates a document against one of uuldana's schemas; an empty list means valid.
export function validateDocument(name: SchemaName, data: unknown): Issue[] {
  const { schema, validate } = compile(name);
  if (validate(data)) return [];
  return toIssues(validate.errors ?? [], schema);
}

// The schema's own description of the property at a JSON pointer, used as the hint.
export function describePointer(name: SchemaName, pointer: string): string | undefined {
  return describeAt(compile(name).schema, splitPointer(pointer));
}

// The top-level keys a document may have, in the schema's order: config.json's settings.
export function schemaKeys(name: SchemaName): string[] {
  return Object.keys((readSchema(name).properties ?? {}) as JsonSchema);
}

// "levels.ask.args[0]" for "/levels/ask/args/0".
export function readablePath(pointer: string): string {
  const segments = splitPointer(pointer);
  if (segments.length === 0) return "(top level)";
  let text = "";
  for (const segment of segments) {
    if (/^\d+$/.test(segment)) text += `[${segment}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(segment)) text += text ? `.${segment}` : segment;
    else text += `[${JSON.stringify(segment)}]`;
  }
  return text;
}

function escapePointerSegment(segment: string): string {
  return segment.replace(/~/g, "~0").replace(/\//g, "~1");
}

// The lines that present a list of issues under a file's name.
export function formatIssues(issues: Issue[]): string[] {
  const lines: string[] = [];
  for (const issue of issues) {
    lines.push(`  at ${issue.pointer || "/"} (${readablePath(issue.pointer)}): ${issue.message}`);
    if ("value" in issue) lines.push(`    value: ${showValue(issue.value)}`);
    if (issue.allowed) lines.push(`    allowed: ${issue.allowed}`);
    if (issue.hint) lines.push(`    hint: ${issue.hint}`);
  }
  return lines;
}

// Where the build step writes a schema's compiled validation code.
export function compiledSchemaFile(name: SchemaName): string {
  return join(packageRoot(), "dist", "schemas", `${name}.validate.cjs`);
}

// --- internal ---

const require = createRequire(import.meta.url);

// Uses the validation code that npm run build compiled from the schema with uuldana's one ajv instance.
function compile(name: SchemaName): { schema: JsonSchema; validate: ValidateFunction } {
  const found = compiled.get(name);
  if (found) return found;
  const entry = { schema: readSchema(name), validate: require(compiledSchemaFile(name)) as ValidateFunction };
  compiled.set(name, entry);
  return entry;
}

function readSchema(name: SchemaName): JsonSchema {
  return compiled.get(name)?.schema ?? (JSON.parse(readFileSync(join(packageRoot(), "schemas", `${name}.schema.json`), "utf8")) as JsonSchema);
}

function splitPointer(pointer: string): string[] {
  if (!pointer) return [];
  return pointer
    .slice(1)
    .split("/")
    .map((segment) => segment.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function toIssues(errors: ErrorObject[], root: JsonSchema): Issue[] {
  const kept = pruneBranches(errors, root);
  const issues: Issue[] = [];
  const seen = new Set<string>();
  for (const error of kept) {
    const issue = toIssue(error, root);
    if (!issue) continue;
    const key = `${issue.pointer}\0${issue.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push(issue);
  }
  return issues;
}

// In anyOf choices, keep only the errors of the branch whose type fits the value; when none fits, one error says so.
function pruneBranches(errors: ErrorObject[], root: JsonSchema): ErrorObject[] {
  let result = errors.filter((e) => e.keyword !== "if");
  for (const choice of errors.filter((e) => e.keyword === "anyOf" || e.keyword === "oneOf")) {
    const branches = (choice.schema as JsonSchema[]).map((branch) => resolveRef(branch, root));
    const fits = branches.some((branch) => typeFits(branch.type, choice.data));
    const here = (e: ErrorObject): boolean => e !== choice && e.instancePath === choice.instancePath;
    result = fits
      ? result.filter((e) => e !== choice && !(here(e) && e.keyword === "type"))
      : result.filter((e) => !here(e));
  }
  return result;
}

function typeFits(type: unknown, value: unknown): boolean {
  switch (type) {
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value);
    case "array":
      return Array.isArray(value);
    case "integer":
      return Number.isInteger(value);
    case "number":
    case "string":
    case "boolean":
      return typeof value === type;
    default:
      return true;
  }
}

function toIssue(error: ErrorObject, root: JsonSchema): Issue | undefined {
  const pointer = error.instancePath;
  const segments = splitPointer(pointer);
  const hint = describeAt(root, segments);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "required": {
      const missing = String(params.missingProperty);
      const at = `${pointer}/${escapePointerSegment(missing)}`;
      return { pointer: at, message: `missing required key "${missing}"`, hint: describeAt(root, [...segments, missing]) };
    }
    case "additionalProperties": {
      const extra = String(params.additionalProperty);
      const known = Object.keys((error.parentSchema as JsonSchema | undefined)?.properties ?? {});
      // a key one slip away from a known one is that key misspelled: the fix is the rename
      const near = closestWord(extra, known);
      if (near) return { pointer: `${pointer}/${escapePointerSegment(extra)}`, message: `unknown key "${extra}"`, hint: `rename "${extra}" to "${near}"` };
      return {
        pointer: `${pointer}/${escapePointerSegment(extra)}`,
        message: `unknown key "${extra}"`,
        allowed: known.length ? known.map((k) => JSON.stringify(k)).join(", ") : "no keys",
        hint: hint ?? (typeof root.description === "string" ? root.description : undefined),
      };
    }
    case "propertyNames":
      return undefined;
    case "anyOf":
    case "oneOf": {
      const branches = (error.schema as JsonSchema[]).map((b) => describeType(b, root));
      return { pointer, message: "has the wrong type", value: error.data, allowed: branches.join(", or "), hint };
    }
    case "pattern":
      if (params.propertyName !== undefined || error.propertyName !== undefined) {
        const name = String(error.propertyName ?? params.propertyName);
        return {
          pointer: `${pointer}/${escapePointerSegment(name)}`,
          message: `invalid name "${name}"`,
          allowed: `names matching ${String(params.pattern)}`,
          hint,
        };
      }
      return { pointer, message: "does not have the expected form", value: error.data, allowed: `text matching ${String(params.pattern)}`, hint };
    case "enum": {
      const values = (params.allowedValues as unknown[]).filter((value): value is string => typeof value === "string");
      const near = typeof error.data === "string" ? closestWord(error.data, values) : undefined;
      const fix = near ? `change "${String(error.data)}" to "${near}"` : hint;
      return { pointer, message: plainMessage(error), value: error.data, allowed: allowedFor(error, root), hint: fix };
    }
    default:
      return { pointer, message: plainMessage(error), value: error.data, allowed: allowedFor(error, root), hint };
  }
}

function plainMessage(error: ErrorObject): string {
  switch (error.keyword) {
    case "type":
      return `must be ${article(String((error.params as { type: string }).type))}`;
    case "enum":
      return "is not one of the allowed values";
    case "const":
      return "is not the allowed value";
    case "uniqueItems":
      return "repeats an item";
    case "minItems":
      return "has too few items";
    case "minLength":
      return "is too short";
    case "minimum":
    case "exclusiveMinimum":
      return "is too small";
    case "maximum":
      return "is too large";
    default:
      return error.message ?? "is invalid";
  }
}

function allowedFor(error: ErrorObject, root: JsonSchema): string | undefined {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "type":
      return article(String(params.type));
    case "enum":
      return (params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ");
    case "const":
      return JSON.stringify(params.allowedValue);
    case "minimum":
      return `a number of at least ${String(params.limit)}`;
    case "exclusiveMinimum":
      return `a number greater than ${String(params.limit)}`;
    case "maximum":
      return `a number of at most ${String(params.limit)}`;
    case "minItems":
      return `at least ${String(params.limit)} item${params.limit === 1 ? "" : "s"}`;
    case "minLength":
      return `text of at least ${String(params.limit)} character${params.limit === 1 ? "" : "s"}`;
    case "uniqueItems":
      return "each item once";
    default:
      return error.parentSchema ? describeType(error.parentSchema as JsonSchema, root) : undefined;
  }
}

function describeType(schema: JsonSchema, root: JsonSchema): string {
  const resolved = resolveRef(schema, root);
  if (typeof resolved.type === "string") return article(resolved.type);
  if (Array.isArray(resolved.enum)) return `one of ${resolved.enum.map((v) => JSON.stringify(v)).join(", ")}`;
  return "a valid value";
}

function article(type: string): string {
  switch (type) {
    case "object":
      return "an object";
    case "array":
      return "an array";
    case "integer":
      return "an integer";
    case "boolean":
      return "true or false";
    default:
      return `a ${type}`;
  }
}

function resolveRef(schema: JsonSchema, root: JsonSchema): JsonSchema {
  const ref = schema.$ref;
  if (typeof ref !== "string" || !ref.startsWith("#/")) return schema;
  let node: unknown = root;
  for (const part of ref.slice(2).split("/")) node = (node as JsonSchema)[part];
  return { ...(node as JsonSchema), ...(schema.description ? { description: schema.description } : {}) };
}

// Walks the schema along an instance path and returns the description of the nearest named property.
function describeAt(root: JsonSchema, segments: string[]): string | undefined {
  let node: JsonSchema | undefined = root;
  let description: string | undefined;
  for (const segment of segments) {
    if (!node) break;
    const step = childSchema(resolveRef(node, root), segment, root);
    node = step?.schema;
    const own = node ? resolveRef(node, root).description : undefined;
    if (step?.named && typeof own === "string") description = own;
  }
  return description;
}

function childSchema(node: JsonSchema, segment: string, root: JsonSchema): { schema: JsonSchema; named: boolean } | undefined {
  const properties = node.properties as Record<string, JsonSchema> | undefined;
  if (properties?.[segment]) return { schema: properties[segment], named: true };
  if (node.items && typeof node.items === "object") return { schema: node.items as JsonSchema, named: false };
  if (node.additionalProperties && typeof node.additionalProperties === "object") {
    return { schema: node.additionalProperties as JsonSchema, named: false };
  }
  for (const key of ["anyOf", "oneOf"]) {
    const branches = node[key] as JsonSchema[] | undefined;
    for (const branch of branches ?? []) {
      const child = childSchema(resolveRef(branch, root), segment, root);
      if (child) return child;
    }
  }
  return undefined;
}

function showValue(value: unknown): string {
  const text = value === undefined ? "(missing)" : JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
