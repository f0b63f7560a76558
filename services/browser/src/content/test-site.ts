// The local site the content tests read: pages built to exercise each part of the extraction,
// served over real HTTP on 127.0.0.1.
import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const ARTICLE = `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Tide tables of the north</title>
  <meta name="description" content="How tides are measured, with tables.">
  <meta property="og:title" content="Tide tables (OG)">
  <meta property="og:image" content="https://cdn.example/first.png">
  <meta property="og:image" content="https://cdn.example/second.png">
  <meta property="og:type" content="article">
  <link rel="canonical" href="/articles/tides">
  <style>body { color: #123; } .hidden { display: none; }</style>
  <script>window.scriptRan = 'SCRIPT-TEXT-NEVER-SHOWN';</script>
</head>
<body>
  <nav id="site-nav"><a href="/">Home</a> | <a href="/about">About us</a> | <a href="javascript:alert(1)">Run</a></nav>
  <article id="story">
    <h1>Tide tables of the north</h1>
    <p>Tides rise and fall twice a day along most of the northern coast, and the people who fish there
    have measured them for centuries with poles, marks on stones and later with gauges. This article
    explains how the measurements are taken, how the numbers are read, and why the tables differ from
    harbour to harbour even when the harbours are only a few miles apart from each other.</p>
    <p>Read the <a href="../docs/gauges.html">gauge guide</a>, the <a href="?page=2">next page</a>,
    the <a href="#method">method</a>, or <a href="mailto:tides@example.org">write to us</a>; call
    <a href="tel:+15550100">the office</a>. <img src="img/gauge.png" alt="A tide gauge"></p>
    <h2 id="method">Method</h2>
    <p>Each reading is the height of the water above chart datum, taken every ten minutes and averaged
    over the hour, which smooths the waves away and leaves the tide. The <del>old</del> new gauges
    record it automatically and send it to the harbour office, where it is checked by hand.</p>
    <table>
      <thead><tr><th>Harbour</th><th>High water</th><th>Range (m)</th></tr></thead>
      <tbody>
        <tr><td>Northport</td><td>06:12</td><td>4.1</td></tr>
        <tr><td>Eastness</td><td>06:40</td><td>3.7</td></tr>
      </tbody>
    </table>
    <ul>
      <li>Instruments
        <ul><li>Tide pole</li><li>Float gauge
          <ul><li>Stilling well</li></ul></li></ul>
      </li>
      <li>Records</li>
    </ul>
    <ol><li>Measure</li><li>Average</li></ol>
    <ul><li><input type="checkbox" checked disabled> Calibrated</li><li><input type="checkbox" disabled> Audited</li></ul>
    <pre><code class="language-js">const range = high - low; // \`\`\` inside
console.log(range);</code></pre>
    <pre>  indented
    preformatted</pre>
    <p class="hidden">Hidden paragraph text.</p>
    <template><p>TEMPLATE-TEXT-NEVER-SHOWN</p></template>
    <noscript>NOSCRIPT-TEXT-NEVER-SHOWN</noscript>
    <iframe src="/frame" title="Tide widget"></iframe>
    <form id="signup">
      <input id="name" name="name" value="initial">
      <input id="secret" type="password" name="secret">
      <textarea id="note" name="note">initial note</textarea>
      <input id="agree" type="checkbox" name="agree">
      <select id="port" name="port"><option value="n">Northport</option><option value="e">Eastness</option></select>
    </form>
  </article>
  <footer id="site-footer">Footer text &copy; Harbour Office. <a href="/privacy">Privacy</a></footer>
</body>
</html>`;

const FRAME = `<!DOCTYPE html><title>Frame</title><p>FRAME-TEXT-NOT-INLINED</p>`;

/**
 * A page that replaces the built-ins an extractor would use, in its main world, and records every
 * call to them and every change to its DOM.
 */
const HOSTILE = `<!DOCTYPE html>
<html lang="de"><head><title>Hostile</title>
<script>
  window.calls = [];
  window.mutations = 0;
  new MutationObserver((list) => { window.mutations += list.length; })
    .observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  const record = (name) => window.calls.push(name);
  Array.prototype.map = function () { record('map'); return ['FORGED']; };
  Array.from = function () { record('Array.from'); return ['FORGED']; };
  Object.defineProperty(Node.prototype, 'textContent', { get() { record('textContent'); return 'FORGED'; } });
  Object.defineProperty(HTMLElement.prototype, 'innerText', { get() { record('innerText'); return 'FORGED'; } });
  Object.defineProperty(Element.prototype, 'outerHTML', { get() { record('outerHTML'); return 'FORGED'; } });
  Element.prototype.getAttribute = function () { record('getAttribute'); return 'https://evil.example/'; };
  document.querySelectorAll = function () { record('querySelectorAll'); return []; };
  document.querySelector = function () { record('querySelector'); return null; };
  JSON.stringify = function () { record('JSON.stringify'); return '"FORGED"'; };
  String.prototype.replace = function () { record('replace'); return 'FORGED'; };
  window.URL = function () { record('URL'); return { href: 'https://evil.example/', protocol: 'https:' }; };
  window.TextEncoder = function () { record('TextEncoder'); };
</script></head>
<body><main id="main"><h1>Real heading</h1><p>Real text with <a href="/real">a real link</a>.</p>
<input id="field" value=""></main></body></html>`;

const EMPTY_MAIN = `<!DOCTYPE html><html><head><title>Menu only</title></head>
<body><nav><a href="/a">A</a> <a href="/b">B</a></nav></body></html>`;

const LATE = `<!DOCTYPE html><title>Late</title><body><p>Early</p>
<script>setTimeout(() => { const p = document.createElement('p'); p.id = 'late'; p.textContent = 'Arrived late';
document.body.appendChild(p); }, 400);</script></body>`;

/** "Café “quoted” € 5" in windows-1252: é, the curly quotes and the euro sign are single bytes. */
const CP1252 = Buffer.concat([
  Buffer.from('<!DOCTYPE html><title>Caf'),
  Buffer.from([0xe9]),
  Buffer.from('</title><p>Caf'),
  Buffer.from([0xe9, 0x20, 0x93]),
  Buffer.from('quoted'),
  Buffer.from([0x94, 0x20, 0x80]),
  Buffer.from(' 5</p>'),
]);

/** "日本語" in Shift_JIS. */
const SHIFT_JIS = Buffer.concat([
  Buffer.from('<!DOCTYPE html><title>'),
  Buffer.from([0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea]),
  Buffer.from('</title><p>'),
  Buffer.from([0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea]),
  Buffer.from('</p>'),
]);

/** About 20 MB of paragraphs with a link each, streamed in chunks. */
export const HUGE_PAGE_BYTES = 20 * 1024 * 1024;
function huge(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
  res.write('<!DOCTYPE html><html><head><title>Huge</title></head><body><h1>Huge page</h1>\n');
  let written = 0;
  let i = 0;
  const writeMore = () => {
    while (written < HUGE_PAGE_BYTES) {
      let chunk = '';
      for (let j = 0; j < 500; j++, i++) {
        chunk += `<p>Paragraph ${i}: tides rise and fall — ĉiutage — twice a day. <a href="/p/${i}">more ${i}</a></p>\n`;
      }
      written += Buffer.byteLength(chunk);
      if (!res.write(chunk)) {
        res.once('drain', writeMore);
        return;
      }
    }
    res.end('</body></html>');
  };
  writeMore();
}

export interface TestSite {
  origin: string;
  close(): Promise<void>;
}

export async function startTestSite(): Promise<TestSite> {
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://site').pathname;
    const html = (body: string | Buffer, charset = 'utf-8') => {
      res.writeHead(200, { 'content-type': `text/html; charset=${charset}` });
      res.end(body);
    };
    switch (path) {
      case '/article/index.html':
        return html(ARTICLE);
      case '/frame':
        return html(FRAME);
      case '/hostile':
        return html(HOSTILE);
      case '/empty':
        return html(EMPTY_MAIN);
      case '/late':
        return html(LATE);
      case '/cp1252':
        return html(CP1252, 'windows-1252');
      case '/sjis':
        return html(SHIFT_JIS, 'Shift_JIS');
      case '/huge':
        return huge(res);
      default:
        res.writeHead(404, { 'content-type': 'text/plain' });
        return res.end('not found');
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
