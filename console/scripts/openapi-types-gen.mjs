// The pure half of console/scripts/openapi-types.mjs: Beaver's OpenAPI document in, the text of
// console/src/api/openapi.d.ts out. No imports, so the in-worker test can check the committed file is current.
const key = (k) => (/^[A-Za-z_$][\w$]*$/.test(k) ? k : JSON.stringify(k));

/** A JSON Schema (as zod 4 writes it) as a TypeScript type. */
export function typeOf(s, indent = "") {
  if (s === true || s === undefined || s === null || (typeof s === "object" && Object.keys(s).length === 0)) return "unknown";
  if (s.$ref) return `Schemas[${JSON.stringify(s.$ref.split("/").pop())}]`;
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(" | ");
  if (s.anyOf || s.oneOf) return [...new Set((s.anyOf ?? s.oneOf).map((x) => typeOf(x, indent)))].join(" | ");
  if (s.allOf) return s.allOf.map((x) => `(${typeOf(x, indent)})`).join(" & ");
  if (Array.isArray(s.type)) return s.type.map((t) => typeOf({ ...s, type: t }, indent)).join(" | ");
  switch (s.type) {
    case "string":
      return "string";
    case "integer":
    case "number":
      return "number";
    case "boolean":
      return "boolean";
    case "null":
      return "null";
    case "array":
      return s.prefixItems ? `[${s.prefixItems.map((x) => typeOf(x, indent)).join(", ")}]` : `Array<${typeOf(s.items, indent)}>`;
    case "object": {
      const inner = indent + "  ";
      const required = new Set(s.required ?? []);
      const props = Object.entries(s.properties ?? {}).map(
        ([k, v]) => `${inner}${key(k)}${required.has(k) ? "" : "?"}: ${typeOf(v, inner)};`,
      );
      const extra = s.additionalProperties;
      if (extra && extra !== false)
        props.push(`${inner}[key: string]: ${extra === true ? "unknown" : `${typeOf(extra, inner)} | undefined`};`);
      if (props.length === 0) return extra === false ? "Record<string, never>" : "Record<string, unknown>";
      return `{\n${props.join("\n")}\n${indent}}`;
    }
    default:
      return "unknown";
  }
}

function paramsOf(op, where) {
  const ps = (op.parameters ?? []).filter((p) => p.in === where);
  if (ps.length === 0) return "never";
  return `{ ${ps.map((p) => `${key(p.name)}${p.required ? "" : "?"}: ${where === "query" ? "string | number | boolean" : typeOf(p.schema)}`).join("; ")} }`;
}

function bodyOf(op) {
  const schema = op.requestBody?.content?.["application/json"]?.schema;
  return schema ? typeOf(schema, "      ") : "never";
}

function responseOf(op) {
  for (const status of ["200", "201", "202"]) {
    const schema = op.responses?.[status]?.content?.["application/json"]?.schema;
    if (schema) return typeOf(schema, "      ");
  }
  return "unknown";
}

export function openapiTypes(doc) {
  const lines = [
    "// Generated from Beaver's OpenAPI document by console/scripts/openapi-types.mjs: do not edit.",
    `// ${doc.info.title} ${doc.info.version}`,
    "",
    "export interface Schemas {",
  ];
  for (const [name, schema] of Object.entries(doc.components?.schemas ?? {})) lines.push(`  ${key(name)}: ${typeOf(schema, "  ")};`);
  lines.push("}", "", "export interface Paths {");
  for (const [path, item] of Object.entries(doc.paths)) {
    lines.push(`  ${JSON.stringify(path)}: {`);
    for (const method of ["get", "post", "put", "patch", "delete"]) {
      const op = item[method];
      if (!op) continue;
      lines.push(
        `    ${method}: {`,
        `      params: ${paramsOf(op, "path")};`,
        `      query: ${paramsOf(op, "query")};`,
        `      body: ${bodyOf(op)};`,
        `      response: ${responseOf(op)};`,
        "    };",
      );
    }
    lines.push("  };");
  }
  lines.push("}", "");
  return lines.join("\n");
}
