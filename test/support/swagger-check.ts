/**
 * Checks a recorded HTTP request against Gitea's own API description (Swagger 2.0): the method and
 * path must match a documented operation (path templates, integer and enum path parameters), query
 * parameters must be documented, and a JSON body must use only documented fields of the operation's
 * body schema, with its required fields and the right basic types. Returns the problems found.
 */
export interface SwaggerParam {
  name: string;
  in: "path" | "query" | "body" | "header" | "formData";
  required?: boolean;
  type?: string;
  enum?: unknown[];
  schema?: SwaggerSchema;
}

export interface SwaggerSchema {
  $ref?: string;
  type?: string;
  enum?: unknown[];
  properties?: Record<string, SwaggerSchema>;
  required?: string[];
  items?: SwaggerSchema;
  additionalProperties?: unknown;
}

export interface SwaggerDoc {
  basePath: string;
  paths: Record<string, Record<string, { operationId?: string; parameters?: SwaggerParam[] }>>;
  definitions: Record<string, SwaggerSchema>;
}

export interface CheckedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  body: unknown;
}

interface Match {
  template: string;
  params: Record<string, string>;
  literalChars: number;
}

function templateRegex(template: string): { re: RegExp; names: string[] } {
  const names: string[] = [];
  const parts = template.split(/(\{[^}]+\})/).map((p) => {
    if (!p.startsWith("{")) return p.replace(/[.*+?^$()|[\]\\]/g, "\\$&");
    const name = p.slice(1, -1);
    names.push(name);
    // `{filepath}` spans slashes; every other parameter is one segment (and `.` ends `{index}` in `{index}.{diffType}`).
    return name === "filepath" ? "(.+)" : "([^/.]+|[^/]+)";
  });
  return { re: new RegExp(`^${parts.join("")}$`), names };
}

function findOperation(doc: SwaggerDoc, method: string, path: string): Match | null {
  let best: Match | null = null;
  for (const template of Object.keys(doc.paths)) {
    if (!doc.paths[template]![method.toLowerCase()]) continue;
    const { re, names } = templateRegex(template);
    const m = re.exec(path);
    if (!m) continue;
    const literalChars = template.replace(/\{[^}]+\}/g, "").length;
    const params = Object.fromEntries(names.map((n, i) => [n, m[i + 1] ?? ""]));
    if (!best || literalChars > best.literalChars) best = { template, params, literalChars };
  }
  return best;
}

function resolve(doc: SwaggerDoc, schema: SwaggerSchema | undefined): SwaggerSchema | undefined {
  let s = schema;
  for (let i = 0; s?.$ref && i < 10; i++) s = doc.definitions[s.$ref.replace("#/definitions/", "")];
  return s;
}

function typeProblems(doc: SwaggerDoc, schema: SwaggerSchema | undefined, value: unknown, where: string): string[] {
  const s = resolve(doc, schema);
  if (!s) return [];
  const problems: string[] = [];
  if (s.enum && !s.enum.includes(value)) problems.push(`${where}: ${JSON.stringify(value)} is not one of ${JSON.stringify(s.enum)}`);
  switch (s.type) {
    case "string":
      if (typeof value !== "string") problems.push(`${where}: expected a string`);
      break;
    case "integer":
      if (!Number.isInteger(value)) problems.push(`${where}: expected an integer`);
      break;
    case "boolean":
      if (typeof value !== "boolean") problems.push(`${where}: expected a boolean`);
      break;
    case "array":
      if (!Array.isArray(value)) problems.push(`${where}: expected an array`);
      else value.forEach((item, i) => problems.push(...typeProblems(doc, s.items, item, `${where}[${i}]`)));
      break;
    case "object":
      if (typeof value !== "object" || value === null || Array.isArray(value)) problems.push(`${where}: expected an object`);
      else problems.push(...objectProblems(doc, s, value as Record<string, unknown>, where));
      break;
  }
  return problems;
}

function objectProblems(doc: SwaggerDoc, s: SwaggerSchema, value: Record<string, unknown>, where: string): string[] {
  const problems: string[] = [];
  if (s.properties && !s.additionalProperties) {
    for (const key of Object.keys(value)) {
      if (!(key in s.properties)) problems.push(`${where}.${key}: not a documented field`);
      else problems.push(...typeProblems(doc, s.properties[key], value[key], `${where}.${key}`));
    }
  }
  for (const req of s.required ?? []) if (!(req in value)) problems.push(`${where}.${req}: required field missing`);
  return problems;
}

/** Problems with `req` according to `doc`; an empty list means it is a real Gitea API call. */
export function checkAgainstSwagger(doc: SwaggerDoc, req: CheckedRequest): string[] {
  const path = req.path.startsWith(doc.basePath) ? req.path.slice(doc.basePath.length) : null;
  if (path === null) return [`${req.method} ${req.path}: outside ${doc.basePath}`];
  const match = findOperation(doc, req.method, path);
  if (!match) return [`${req.method} ${path}: no such operation in the API description`];
  const op = doc.paths[match.template]![req.method.toLowerCase()]!;
  const params = op.parameters ?? [];
  const problems: string[] = [];
  const label = `${req.method} ${match.template}`;
  for (const p of params.filter((x) => x.in === "path")) {
    const raw = decodeURIComponent(match.params[p.name] ?? "");
    if (!raw) problems.push(`${label}: path parameter ${p.name} is empty`);
    if (p.type === "integer" && !/^\d+$/.test(raw)) problems.push(`${label}: path parameter ${p.name}=${raw} is not an integer`);
    if (p.enum && !p.enum.includes(raw)) problems.push(`${label}: path parameter ${p.name}=${raw} is not one of ${JSON.stringify(p.enum)}`);
  }
  const queryParams = new Map(params.filter((x) => x.in === "query").map((x) => [x.name, x]));
  for (const [name, value] of Object.entries(req.query)) {
    const p = queryParams.get(name);
    if (!p) problems.push(`${label}: query parameter ${name} is not documented`);
    else if (p.type === "integer" && !/^-?\d+$/.test(value)) problems.push(`${label}: query parameter ${name}=${value} is not an integer`);
    else if (p.type === "boolean" && !/^(true|false)$/.test(value))
      problems.push(`${label}: query parameter ${name}=${value} is not a boolean`);
  }
  const bodyParam = params.find((x) => x.in === "body");
  if (req.body !== null && req.body !== undefined) {
    if (!bodyParam) problems.push(`${label}: sends a body the operation does not take`);
    else problems.push(...typeProblems(doc, bodyParam.schema, req.body, `${label} body`));
  } else if (bodyParam?.required) {
    problems.push(`${label}: required body missing`);
  }
  return problems;
}

/** The documented operation a request matched (for test messages), or null. */
export function operationOf(doc: SwaggerDoc, req: Pick<CheckedRequest, "method" | "path">): string | null {
  const path = req.path.startsWith(doc.basePath) ? req.path.slice(doc.basePath.length) : req.path;
  const m = findOperation(doc, req.method, path);
  return m ? `${req.method} ${m.template}` : null;
}

/** `base` with the paths and definitions of `extra` added (Gitea 1.22's description plus the newer Actions operations). */
export function mergeSwagger(base: SwaggerDoc, extra: SwaggerDoc): SwaggerDoc {
  return { ...base, paths: { ...base.paths, ...extra.paths }, definitions: { ...base.definitions, ...extra.definitions } };
}
