/**
 * The documentation: every relative link of the README, CONTRIBUTING.md, CHANGELOG.md and docs/
 * reaches a file and, when it names one, a heading; nothing points outside the repository; and
 * the facts the code holds once (the routes, the error codes and their statuses, the
 * configuration's variables and props) each have their row in the page that documents them.
 * Across the repository, no file cites the contract that lived outside it or a tracker's issue
 * number, and every `docs/….md#anchor` that code names reaches its heading.
 */
import { execFileSync } from 'node:child_process';
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

/** Directories whose files are built, installed or git's own: never the repository's text. */
const NOT_SOURCE = new Set(['node_modules', 'cdk.out', 'dist', '.git']);

/**
 * The repository's own text files: what git tracks, and new files it would track (`--others
 * --exclude-standard` honours .gitignore), minus anything under a directory of {@link NOT_SOURCE}
 * and binary files (a NUL byte), so that nothing installed or generated is read.
 */
function repositoryTextFiles(): readonly string[] {
  const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' });
  return [...new Set(listed.split('\0'))]
    .filter((path) => path !== '' && !path.split('/').some((segment) => NOT_SOURCE.has(segment)))
    .filter((path) => existsSync(join(ROOT, path)) && statSync(join(ROOT, path)).isFile() && !read(path).includes('\0'))
    .sort();
}

/** The 1-based line of `index` in `text`. */
function lineAt(text: string, index: number): number {
  return text.slice(0, index).split('\n').length;
}

/** A reference wrapped inside a comment may break after its first word: ` * ` or `// ` then goes between. */
const WRAP = String.raw`(?: |\n[ \t]*(?:\*|\/\/)[ \t]*)`;

/** What no file may cite: the contract that lived outside the repository, and (outside CHANGELOG.md) an issue number. */
const FORBIDDEN_REFERENCES: readonly { readonly what: string; readonly pattern: RegExp; readonly isAllowedIn?: (path: string) => boolean }[] = [
  { what: 'the contract outside the repository', pattern: new RegExp(String.raw`CONTRACT${WRAP}?\u00a7|CONTRACT\.md`, 'g') },
  { what: 'an issue number', pattern: new RegExp(String.raw`\bissue${WRAP}#?\d+`, 'gi'), isAllowedIn: (path) => path === 'CHANGELOG.md' },
];

describe('the repository', () => {
  const files = repositoryTextFiles();

  it('reads its own files, and none that is installed, built or git\'s', () => {
    expect(files).toEqual(expect.arrayContaining(['package.json', 'CHANGELOG.md', 'lambda/core/routing.ts', 'docs/api.md', 'docs/openapi.json', 'test/unit/docs/docs.test.ts']));
    expect(files.filter((path) => path.split('/').some((segment) => NOT_SOURCE.has(segment)))).toEqual([]);
    expect(existsSync(join(ROOT, 'node_modules'))).toBe(true); // present, and still not read
  });

  it('cites neither the contract that lived outside the repository nor, outside CHANGELOG.md, an issue number: it names the section of docs/api.md or the capability', () => {
    const offenders: string[] = [];
    for (const path of files) {
      const text = read(path);
      for (const { what, pattern, isAllowedIn } of FORBIDDEN_REFERENCES) {
        if (isAllowedIn?.(path) === true) continue;
        for (const match of text.matchAll(pattern)) offenders.push(`${path}:${lineAt(text, match.index)} ${what}: ${JSON.stringify(match[0])}`);
      }
    }

    expect(offenders).toEqual([]);
  });

  it('names only pages and headings that exist where code, tests or the API document point into docs/', () => {
    const broken: string[] = [];
    let references = 0;
    for (const path of files.filter((file) => !file.endsWith('.md'))) {
      const text = read(path);
      for (const match of text.matchAll(/(?<![\w./-])(docs\/[\w./-]*?\.md)(?:#([\w-]+))?/g)) {
        const [, page = '', anchor] = match;
        references += 1;
        const where = `${path}:${lineAt(text, match.index)} ${match[0]}`;
        if (!existsSync(join(ROOT, page))) broken.push(`${where}: no file ${page}`);
        else if (anchor !== undefined && !anchorsOf(read(page)).has(anchor)) broken.push(`${where}: no heading #${anchor} in ${page}`);
      }
    }

    expect(references).toBeGreaterThan(50);
    expect(broken).toEqual([]);
  });
});

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

    expect(text).not.toMatch(/\.\.\/shared|CONTRACT\.md|CONTRACT \u00a7/);
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
