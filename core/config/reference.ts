// The config and manifest reference in the README, written from the schemas' own descriptions so the two cannot
// disagree: one table per schema, a row per key (nested keys by their dotted path).

interface SchemaNode {
  description?: string;
  type?: string;
  enum?: unknown[];
  items?: SchemaNode;
  anyOf?: SchemaNode[];
  properties?: Record<string, SchemaNode>;
  additionalProperties?: SchemaNode | boolean;
  required?: string[];
  $ref?: string;
  $defs?: Record<string, SchemaNode>;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  pattern?: string;
}

// The text between these markers in docs/reference.md is the reference; everything else is written by hand.
export const REFERENCE_START = "<!-- reference: generated from schemas/*.schema.json by npm run reference -->";
export const REFERENCE_END = "<!-- end of reference -->";

// The reference for a config schema and a manifest schema, as Markdown.
export function renderReference(config: SchemaNode, manifest: SchemaNode): string {
  return [
    "## config.json",
    "",
    config.description ?? "",
    "",
    ...table(config),
    "",
    "## Provider manifests",
    "",
    manifest.description ?? "",
    "",
    ...table(manifest),
  ].join("\n");
}

// A page (docs/reference.md) with its reference section replaced by this one.
export function replaceReference(page: string, reference: string): string {
  const start = page.indexOf(REFERENCE_START);
  const end = page.indexOf(REFERENCE_END);
  if (start === -1 || end < start) throw new Error(`the page has no "${REFERENCE_START}" … "${REFERENCE_END}" section`);
  return `${page.slice(0, start + REFERENCE_START.length)}\n\n${reference}\n\n${page.slice(end)}`;
}

// --- internal ---

function table(schema: SchemaNode): string[] {
  const rows = ["| key | value | required | meaning |", "| --- | --- | --- | --- |"];
  const visit = (node: SchemaNode, prefix: string): void => {
    for (const [key, raw] of Object.entries(node.properties ?? {})) {
      if (key === "$schema") continue;
      const child = resolve(schema, raw);
      const path = `${prefix}${key}`;
      const required = node.required?.includes(key) ? "yes" : "";
      rows.push(`| \`${path}\` | ${valueOf(schema, child)} | ${required} | ${escape(raw.description ?? child.description ?? "")} |`);
      const object = objectPart(schema, child);
      const shape = object?.properties ? sharedRef(object) : undefined;
      if (object?.properties && shape) {
        // keys that all take one shape (the levels) get one row naming them, and their shape's rows once, under the
        // shape's own name: levels.<level>
        const names = Object.entries(object.properties).map(([name, value]) => `\`${name}\`: ${value.description ?? ""}`);
        const placeholder = `${path}.<${shape.replace(/^#\/\$defs\//, "")}>`;
        rows.push(`| \`${placeholder}\` | object |  | ${escape(names.join(" "))} |`);
        visit(resolve(schema, Object.values(object.properties)[0]!), `${placeholder}.`);
      } else if (object?.properties) visit(object, `${path}${child.type === "array" ? "[]" : ""}.`);
    }
  };
  visit(schema, "");
  return rows;
}

// The one $ref every key of an object's properties points to, if they all point to the same.
function sharedRef(node: SchemaNode): string | undefined {
  const refs = new Set(Object.values(node.properties ?? {}).map((value) => value.$ref));
  const [ref] = refs;
  return refs.size === 1 && Object.keys(node.properties ?? {}).length > 1 ? ref : undefined;
}

// The schema a $ref points to inside the same document, with the referring node's own keys on top.
function resolve(root: SchemaNode, node: SchemaNode): SchemaNode {
  if (!node.$ref) return node;
  const name = node.$ref.replace(/^#\/\$defs\//, "");
  return { ...root.$defs?.[name], ...node, $ref: undefined };
}

// The object inside a node whose keys get rows of their own: the node itself, its items, or an object among anyOf.
function objectPart(root: SchemaNode, node: SchemaNode): SchemaNode | undefined {
  if (node.properties) return node;
  const items = node.items ? resolve(root, node.items) : undefined;
  if (items?.properties) return items;
  return items?.anyOf?.map((option) => resolve(root, option)).find((option) => option.properties);
}

function valueOf(root: SchemaNode, node: SchemaNode): string {
  if (node.enum) return node.enum.map((value) => `\`${JSON.stringify(value)}\``).join(", ");
  if (node.anyOf) return node.anyOf.map((option) => valueOf(root, resolve(root, option))).join(" or ");
  const bounds = [
    node.exclusiveMinimum !== undefined ? `> ${node.exclusiveMinimum}` : "",
    node.minimum !== undefined ? `≥ ${node.minimum}` : "",
    node.maximum !== undefined ? `≤ ${node.maximum}` : "",
  ].filter(Boolean);
  switch (node.type) {
    case "array":
      return `array of ${node.items ? valueOf(root, resolve(root, node.items)) : "values"}`;
    case "object":
      if (node.properties) return "object";
      return typeof node.additionalProperties === "object" ? `object of ${valueOf(root, node.additionalProperties)}` : "object";
    case "number":
    case "integer":
      return bounds.length ? `${node.type} ${bounds.join(", ")}` : node.type;
    default:
      return node.type ?? "any";
  }
}

function escape(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\n/g, " ");
}
