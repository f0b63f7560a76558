// The error table of the public guide (docs/api.md, "Errors") is this library's table, row for
// row: every code with its HTTP status and, where the guide has a `message` column, the default
// message exactly. A guide without the table fails, so the two cannot drift apart.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { errorCodes, errorTable, httpStatusOf } from './index.js';

/** docs/api.md from the repository root (this file runs from libs/errors/dist). */
const guidePath = fileURLToPath(new URL('../../../docs/api.md', import.meta.url));

interface DocumentedRow {
  code: string;
  status: number;
  message?: string;
}

const cells = (line: string) =>
  line
    .trim()
    .replace(/^\||\|$/g, '')
    .split('|')
    .map((cell) => cell.trim());

/** The rows of the first table whose header names `status` and `code` columns. */
function documentedTable(markdown: string): DocumentedRow[] | undefined {
  const lines = markdown.split('\n');
  for (let i = 0; i + 1 < lines.length; i++) {
    if (!lines[i]!.trim().startsWith('|')) continue;
    const header = cells(lines[i]!).map((cell) => cell.toLowerCase());
    const [status, code, message] = ['status', 'code', 'message'].map((name) => header.indexOf(name));
    if (status === undefined || code === undefined || status < 0 || code < 0) continue;
    const rows: DocumentedRow[] = [];
    for (const line of lines.slice(i + 2)) {
      if (!line.trim().startsWith('|')) break;
      const row = cells(line);
      rows.push({
        code: row[code]!.replace(/`/g, ''),
        status: Number(row[status]),
        ...(message !== undefined && message >= 0 ? { message: row[message] } : {}),
      });
    }
    return rows;
  }
  return undefined;
}

test('docs/api.md has the error table of libs/errors: each code once, its status and its message', () => {
  let guide: string;
  try {
    guide = readFileSync(guidePath, 'utf8');
  } catch {
    assert.fail(`the API guide ${guidePath} is missing; its "Errors" table must list every code`);
  }
  const documented = documentedTable(guide);
  assert.ok(documented, 'docs/api.md has no table with `status` and `code` columns');

  const codes = documented.map((row) => row.code);
  assert.deepEqual(
    codes.filter((code, n) => codes.indexOf(code) !== n),
    [],
    'a code is listed twice in docs/api.md',
  );
  const withMessages = documented.every((row) => row.message !== undefined);
  const expected = errorCodes.map((code) => ({
    code,
    status: httpStatusOf(code),
    ...(withMessages ? { message: errorTable[code].message } : {}),
  }));
  const byCode = (a: DocumentedRow, b: DocumentedRow) => a.code.localeCompare(b.code);
  assert.deepEqual([...documented].sort(byCode), [...expected].sort(byCode));
});
