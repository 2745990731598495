/**
 * The curl commands of the README and the docs pages, read as a shell would read them (quotes, line
 * continuations, variables, pipes and command substitution), so a test can check each one against
 * the API it calls (test/edge/http/doc-commands.test.ts). Small on purpose: it understands what our
 * examples use, not all of sh.
 */

export interface CurlCommand {
  /** Where it was found, for messages: `file:line`. */
  where: string;
  method: string;
  url: string;
  /** The `-d` / `--data-binary` argument as written (after variable substitution); `@file` bodies are kept as they are. */
  body: string | null;
  headers: string[];
}

/** The contents of the ```sh blocks of a Markdown text, with the line each starts on. */
export function shellBlocks(markdown: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  // Fences may be indented (a block inside a list item); the indentation is not part of the commands.
  const re = /^( *)```(?:sh|bash|shell)\n([\s\S]*?)^ *```/gm;
  for (let m = re.exec(markdown); m; m = re.exec(markdown)) {
    const indent = new RegExp(`^ {0,${m[1]!.length}}`, "gm");
    out.push({ line: markdown.slice(0, m.index).split("\n").length + 1, text: m[2]!.replace(indent, "") });
  }
  return out;
}

/** Shell words grouped into simple commands; separators are newlines, `;`, `&&`, `||`, `|`, `$(` and `)`. */
export function shellCommands(text: string): { line: number; words: string[] }[] {
  const commands: { line: number; words: string[] }[] = [];
  let words: string[] = [];
  let word: string | null = null;
  let line = 0;
  let start = 0;
  const endWord = () => {
    if (word !== null) words.push(word);
    word = null;
  };
  const endCommand = () => {
    endWord();
    if (words.length > 0) commands.push({ line: start, words });
    words = [];
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (words.length === 0 && word === null) start = line;
    if (ch === "\\" && text[i + 1] === "\n") {
      i++;
      line++;
      endWord();
    } else if (ch === "'") {
      // An unclosed quote takes the rest of the text, as sh would wait for more.
      const close = text.indexOf("'", i + 1) < 0 ? text.length : text.indexOf("'", i + 1);
      const part = text.slice(i + 1, close);
      line += part.split("\n").length - 1;
      word = (word ?? "") + part;
      i = close;
    } else if (ch === '"') {
      let j = i + 1;
      let part = "";
      while (j < text.length && text[j] !== '"') {
        if (text[j] === "\\" && j + 1 < text.length) j++;
        part += text[j];
        j++;
      }
      line += part.split("\n").length - 1;
      word = (word ?? "") + part;
      i = j;
    } else if (ch === "#" && word === null) {
      while (i + 1 < text.length && text[i + 1] !== "\n") i++;
    } else if (ch === "\n" || ch === ";" || ch === "|" || ch === ")" || (ch === "&" && text[i + 1] === "&")) {
      if (ch === "\n") line++;
      if (ch === "&" || (ch === "|" && text[i + 1] === "|")) i++;
      endCommand();
    } else if (ch === "$" && text[i + 1] === "(") {
      i++;
      endCommand();
    } else if (ch === " " || ch === "\t") {
      endWord();
    } else {
      word = (word ?? "") + ch;
    }
  }
  endCommand();
  return commands;
}

const OPTIONS_WITH_ARGUMENT = new Set(["-H", "-u", "-o", "--header", "--user", "-X", "-d", "--data", "--data-binary", "--data-raw"]);

/** Every curl command in the ```sh blocks of `markdown`, with `vars` substituted (`$NAME` → value). */
export function curlCommands(file: string, markdown: string, vars: Record<string, string>): CurlCommand[] {
  const substitute = (text: string) => text.replace(/\$([A-Z_][A-Z0-9_]*)/g, (all, name: string) => vars[name] ?? all);
  const out: CurlCommand[] = [];
  for (const block of shellBlocks(markdown)) {
    for (const command of shellCommands(block.text)) {
      const [program, ...args] = command.words;
      if (program !== "curl") continue;
      let method: string | null = null;
      let url: string | null = null;
      let body: string | null = null;
      const headers: string[] = [];
      for (let i = 0; i < args.length; i++) {
        const arg = args[i]!;
        if (OPTIONS_WITH_ARGUMENT.has(arg)) {
          const value = substitute(args[++i] ?? "");
          if (arg === "-X") method = value;
          else if (arg === "-H" || arg === "--header") headers.push(value);
          else if (arg === "-u" || arg === "--user") headers.push(`Authorization: Basic <${value.split(":")[0]}>`);
          else if (arg.startsWith("-d") || arg.startsWith("--data")) body = value;
        } else if (!arg.startsWith("-")) {
          url = substitute(arg);
        }
      }
      if (url === null) continue;
      out.push({ where: `${file}:${block.line + command.line}`, method: method ?? (body !== null ? "POST" : "GET"), url, body, headers });
    }
  }
  return out;
}
