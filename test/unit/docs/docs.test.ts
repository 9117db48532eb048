/**
 * The documentation: every relative link of the README, CONTRIBUTING.md, CHANGELOG.md and docs/
 * reaches a file and, when it names one, a heading; nothing points outside the repository; and
 * the facts the code holds once (the routes, the error codes and their statuses, the
 * configuration's variables and props) each have their row in the page that documents them.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES } from '../../../lambda/config.js';
import * as answers from '../../../lambda/core/answers.js';
import { buildApiDocument } from '../../../lambda/api-document/document.js';
import { ErrorCode } from '../../../lambda/core/api-error.js';
import { ERROR_STATUS_CODES } from '../../../lambda/handlers/responses.js';
import { ROUTES } from '../../../lambda/routes.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The pages a reader of the repository follows: the front door, its neighbours, and docs/ (design notes included). */
function documentationFiles(): readonly string[] {
  const inDocs = (dir: string): string[] =>
    readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return inDocs(path);
      return entry.name.endsWith('.md') ? [path] : [];
    });
  return ['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md', ...inDocs('docs')];
}

function read(path: string): string {
  return readFileSync(join(ROOT, path), 'utf8');
}

/** The text outside fenced code blocks, where a `#` or `[x](y)` is no heading or link. */
function prose(markdown: string): string {
  return markdown.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '');
}

/**
 * The anchors GitHub gives a file's headings: lower case, punctuation but `-` and `_` dropped,
 * spaces as `-`, a repeated one suffixed `-1`, `-2`, … (as github-slugger does).
 */
function anchorsOf(markdown: string): ReadonlySet<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, heading] of prose(markdown).matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const text = (heading ?? '').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const slug = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** Every `[text](target)` and `![alt](target)` of a file's prose, with its line. */
function linksOf(markdown: string): readonly { readonly target: string; readonly line: number }[] {
  const text = prose(markdown);
  return [...text.matchAll(/!?\[[^\]]*\]\(([^)\s]+)\)/g)].map((match) => ({
    target: match[1] ?? '',
    line: text.slice(0, match.index).split('\n').length,
  }));
}

describe('the documentation', () => {
  const files = documentationFiles();

  it('has every page the README links to', () => {
    expect(files).toEqual(expect.arrayContaining(['docs/api.md', 'docs/operations.md', 'docs/configuration.md', 'docs/performance.md', 'docs/upgrading.md', 'docs/glossary.md']));
  });

  it.each(files)('%s: every relative link reaches a file, and a heading when it names one', (file) => {
    const broken: string[] = [];
    for (const { target, line } of linksOf(read(file))) {
      if (/^[a-z]+:/i.test(target)) continue; // https:, mailto: — outside the repository by design
      const [path = '', anchor] = target.split('#');
      const resolved = path === '' ? file : relative(ROOT, join(ROOT, dirname(file), decodeURIComponent(path)));
      if (resolved.startsWith('..') || !existsSync(join(ROOT, resolved))) {
        broken.push(`${file}:${line} ${target}: no file ${resolved}`);
        continue;
      }
      if (anchor === undefined) continue;
      if (statSync(join(ROOT, resolved)).isDirectory() || !resolved.endsWith('.md')) {
        broken.push(`${file}:${line} ${target}: an anchor into something that is not a page`);
      } else if (!anchorsOf(read(resolved)).has(anchor)) {
        broken.push(`${file}:${line} ${target}: no heading #${anchor} in ${resolved}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it.each(files)('%s: closes every code block it opens', (file) => {
    const fences = read(file).split('\n').filter((line) => line.startsWith('```'));

    expect(fences.length % 2).toBe(0);
  });

  it.each(files)('%s: refers to no document outside the repository', (file) => {
    const text = read(file);

    expect(text).not.toMatch(/\.\.\/shared|CONTRACT\.md|CONTRACT §/);
  });
});

describe('docs/api.md', () => {
  const api = read('docs/api.md');
  /** The routes of the table under `## Routes`, each as `METHOD /path` with its parameters as `{}`. */
  const documentedRoutes = (): readonly string[] => {
    const table = api.split(/^## Routes$/m)[1]?.split(/^## /m)[0] ?? '';
    const rows = table.split('\n').filter((line) => line.startsWith('| `'));
    const firstCells = rows.map((row) => row.split(' | ')[0] ?? '');
    return firstCells.flatMap((cell) =>
      [...cell.matchAll(/`([A-Z]+ \/[^`?]*)/g)].map((match) => (match[1] ?? '').replace(/\{[^}]*\}/g, '{}')),
    );
  };

  it('lists every route of the API, and no other, in its routes table', () => {
    const routes = Object.values(ROUTES)
      .flat()
      .map((route) => route.replace(/\{[^}]*\}/g, '{}'));

    expect([...documentedRoutes()].sort()).toEqual([...routes].sort());
  });

  it('names every field of every answer the API gives', () => {
    const unnamed: string[] = [];
    for (const [name, schema] of Object.entries(answers)) {
      if (!name.endsWith('AnswerSchema')) continue;
      const shape = (schema as { readonly shape?: Readonly<Record<string, unknown>> }).shape ?? {};
      expect(Object.keys(shape), name).not.toEqual([]);
      for (const field of Object.keys(shape)) if (!new RegExp(`\\b${field}\\b`).test(api)) unnamed.push(`${name}: ${field}`);
    }

    expect(unnamed).toEqual([]);
  });

  it('has beside it the OpenAPI document the API serves (npm run api-document writes it again)', () => {
    const file: unknown = JSON.parse(read('docs/openapi.json'));

    expect(file, 'docs/openapi.json is not the document the code generates: run npm run api-document').toEqual(buildApiDocument());
  });

  it('lists every error code with the status it is answered with', () => {
    const codes = Object.values(ErrorCode);

    for (const code of codes) expect(api).toContain(`| \`${code}\` | ${ERROR_STATUS_CODES[code]} |`);
  });
});

describe('docs/configuration.md', () => {
  const configuration = read('docs/configuration.md');
  const rows = configuration.split('\n').filter((line) => /^\| `[A-Z_]+` \|/.test(line));
  const localOnly = new Set(['PORT', 'DATA_DIR']);

  it('has a row for every variable of the configuration, with its construct prop, and no other', () => {
    const variables = Object.entries(CONFIG_VARIABLES);

    expect(rows.map((row) => /^\| `([A-Z_]+)`/.exec(row)?.[1]).sort()).toEqual(variables.map(([, variable]) => variable).sort());
    for (const [prop, variable] of variables) {
      const row = rows.find((line) => line.startsWith(`| \`${variable}\` |`));
      expect(row).toContain(localOnly.has(variable) ? '| — (local stack only) |' : `| \`${prop}\` |`);
    }
  });
});
