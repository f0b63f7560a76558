import assert from 'node:assert/strict';
import { test } from 'node:test';
import { htmlToMarkdown } from './markdown.js';

test('code blocks are fenced, with a fence longer than any inside the code', () => {
  assert.equal(htmlToMarkdown('<pre>a\n```\nb</pre>'), '````\na\n```\nb\n````');
  assert.equal(
    htmlToMarkdown('<pre><code class="language-py">print(1)\n</code></pre>'),
    '```py\nprint(1)\n```',
  );
});

test('scripts, styles, templates and noscript never reach the Markdown', () => {
  const md = htmlToMarkdown(
    '<p>kept</p><script>s()</script><style>p{}</style><template><p>t</p></template><noscript>n</noscript>',
  );
  assert.equal(md, 'kept');
});

test('GFM: tables without a heading row get an empty one; strikethrough', () => {
  assert.equal(
    htmlToMarkdown('<table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table><s>x</s>'),
    '|     |     |\n| --- | --- |\n| a   | b   |\n| c   | d   |\n\n~~x~~',
  );
});
