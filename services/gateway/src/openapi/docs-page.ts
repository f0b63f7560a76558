/**
 * GET /docs (API.md §8): a self-contained page that fetches /openapi.json and renders it. No
 * external scripts, styles or fonts (the cluster may have no internet); the one <script> and
 * <style> carry the response's CSP nonce; the script builds the DOM with textContent only.
 */

const NONCE = /^[A-Za-z0-9+/_=-]{8,}$/;

/** A CSP nonce goes into an attribute: accept base64 / base64url only. */
export function checkedNonce(nonce: string): string {
  if (!NONCE.test(nonce)) throw new Error('a CSP nonce must be base64 (at least 8 characters)');
  return nonce;
}

const style = `
:root { --fg: #1d2330; --muted: #5d6678; --bg: #fff; --panel: #f5f7fa; --line: #dde2ea; --accent: #2456c7;
  --get: #1f7a44; --post: #2456c7; --patch: #8a5a00; --delete: #b3261e; --put: #6a3fb5; --code: #eef1f6; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e4e8ef; --muted: #9aa4b5; --bg: #14171c; --panel: #1c2027; --line: #2e343e; --accent: #7ea6ff;
    --get: #5fcf8e; --post: #7ea6ff; --patch: #e6b450; --delete: #ff8a80; --put: #c3a6ff; --code: #252a33; }
}
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
code { background: var(--code); padding: 0 4px; border-radius: 3px; }
a { color: var(--accent); text-decoration: none; } a:hover { text-decoration: underline; }
header.top { position: sticky; top: 0; z-index: 2; display: flex; gap: 12px; align-items: center; padding: 10px 20px;
  background: var(--panel); border-bottom: 1px solid var(--line); }
header.top h1 { font-size: 18px; margin: 0; } header.top .version { color: var(--muted); }
header.top input { margin-left: auto; width: 260px; padding: 5px 8px; border: 1px solid var(--line); border-radius: 4px; background: var(--bg); color: var(--fg); }
button { padding: 5px 10px; border: 1px solid var(--line); border-radius: 4px; background: var(--bg); color: var(--fg); cursor: pointer; }
.layout { display: grid; grid-template-columns: 250px 1fr; }
nav { position: sticky; top: 49px; align-self: start; max-height: calc(100vh - 49px); overflow: auto; padding: 12px 8px 24px 16px; border-right: 1px solid var(--line); }
nav .tag { font-weight: 600; margin: 10px 0 2px; } nav a { display: block; padding: 1px 0; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; font-size: 12.5px; }
main { padding: 16px 24px 64px; max-width: 1100px; }
h2 { font-size: 20px; margin: 28px 0 6px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
h4 { margin: 14px 0 4px; font-size: 13px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
p { margin: 4px 0 8px; } .muted { color: var(--muted); } .error { color: var(--delete); }
details.op { border: 1px solid var(--line); border-radius: 6px; margin: 8px 0; background: var(--bg); }
details.op > summary { display: flex; gap: 10px; align-items: center; padding: 7px 10px; cursor: pointer; list-style: none; }
details.op > summary::-webkit-details-marker { display: none; }
details.op[open] > summary { border-bottom: 1px solid var(--line); background: var(--panel); }
.op-body { padding: 4px 14px 12px; }
.method { display: inline-block; min-width: 62px; text-align: center; font-weight: 700; font-size: 12px; padding: 2px 6px; border-radius: 4px; color: #fff; }
.m-get { background: var(--get); } .m-post { background: var(--post); } .m-patch { background: var(--patch); }
.m-delete { background: var(--delete); } .m-put { background: var(--put); } .m-other { background: var(--muted); }
.path { font-weight: 600; background: none; } .badge { font-size: 11px; padding: 1px 6px; border: 1px solid var(--line); border-radius: 10px; color: var(--muted); white-space: nowrap; }
.summary-text { flex: 1; color: var(--muted); }
table { border-collapse: collapse; width: 100%; margin: 4px 0; } th, td { text-align: left; vertical-align: top; padding: 4px 8px; border-bottom: 1px solid var(--line); }
th { font-size: 12px; color: var(--muted); font-weight: 600; }
ul.fields { list-style: none; margin: 2px 0; padding-left: 16px; border-left: 2px solid var(--line); }
ul.fields > li { padding: 2px 0; } .field-name { font-weight: 600; }
.req { color: var(--delete); font-size: 11px; font-weight: 600; } .type { color: var(--accent); } .constraint { color: var(--muted); font-size: 12px; }
.resp { margin: 6px 0; padding: 6px 10px; border-left: 3px solid var(--line); background: var(--panel); border-radius: 0 4px 4px 0; }
.status { font-weight: 700; margin-right: 8px; } .s2 { color: var(--get); } .s1 { color: var(--accent); } .s4, .s5 { color: var(--delete); }
details.schema > summary { cursor: pointer; color: var(--accent); }
@media (max-width: 800px) { .layout { grid-template-columns: 1fr; } nav { display: none; } }
`;

/* The page's script. Plain ES2017, no template literals: it is embedded in a TypeScript string. */
const script = String.raw`
(function () {
  'use strict';
  var doc = null;
  var methods = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

  function $(id) { return document.getElementById(id); }
  function el(tag, className, children) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    add(node, children);
    return node;
  }
  function add(node, children) {
    if (children === undefined || children === null) return node;
    if (!Array.isArray(children)) children = [children];
    for (var i = 0; i < children.length; i++) {
      var child = children[i];
      if (child === undefined || child === null || child === false) continue;
      node.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
    }
    return node;
  }
  /** Text with backtick spans shown as code; never parsed as HTML. */
  function rich(textValue, tag) {
    var node = el(tag || 'span');
    var parts = String(textValue).split('\u0060');
    for (var i = 0; i < parts.length; i++) add(node, i % 2 ? el('code', '', parts[i]) : parts[i]);
    return node;
  }
  function paragraphs(textValue) {
    var box = el('div');
    String(textValue || '').split(/\n\s*\n/).forEach(function (para) { if (para.trim()) box.appendChild(rich(para.trim(), 'p')); });
    return box;
  }
  function slug(value) { return String(value).toLowerCase().replace(/[^a-z0-9]+/g, '-'); }

  function lookup(ref) {
    if (typeof ref !== 'string' || ref.indexOf('#/') !== 0) return undefined;
    var node = doc;
    var parts = ref.slice(2).split('/');
    for (var i = 0; i < parts.length && node; i++) node = node[parts[i].replace(/~1/g, '/').replace(/~0/g, '~')];
    return node;
  }
  function refName(ref) { return String(ref).split('/').pop(); }
  function deref(node) { return node && typeof node.$ref === 'string' ? lookup(node.$ref) || {} : node || {}; }
  function schemaLink(ref) {
    var link = el('a', 'type', refName(ref));
    link.href = '#schema-' + slug(refName(ref));
    return link;
  }

  function typeLabel(schema) {
    if (!schema) return 'any';
    if (schema.$ref) return refName(schema.$ref);
    if (Object.prototype.hasOwnProperty.call(schema, 'const')) return JSON.stringify(schema.const);
    var variants = schema.oneOf || schema.anyOf;
    if (variants) return variants.map(typeLabel).join(' | ');
    var types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
    if (types.length === 0) return schema.properties ? 'object' : 'any';
    return types.map(function (t) { return t === 'array' ? 'array of ' + typeLabel(schema.items) : t; }).join(' | ');
  }
  function typeNode(schema) {
    if (schema && schema.$ref) return schemaLink(schema.$ref);
    var variants = schema && (schema.oneOf || schema.anyOf);
    if (variants) {
      var box = el('span');
      variants.forEach(function (v, i) { if (i) add(box, ' | '); add(box, typeNode(v)); });
      return box;
    }
    if (schema && schema.type === 'array' && schema.items && schema.items.$ref) return el('span', 'type', ['array of ', schemaLink(schema.items.$ref)]);
    return el('span', 'type', typeLabel(schema));
  }
  function constraints(schema) {
    var out = [];
    if (!schema) return out;
    if (schema.enum) out.push('one of: ' + schema.enum.map(function (v) { return JSON.stringify(v); }).join(', '));
    var low = schema.minimum !== undefined ? '≥ ' + schema.minimum : schema.exclusiveMinimum !== undefined ? '> ' + schema.exclusiveMinimum : null;
    var high = schema.maximum !== undefined ? '≤ ' + schema.maximum : schema.exclusiveMaximum !== undefined ? '< ' + schema.exclusiveMaximum : null;
    if (low || high) out.push([low, high].filter(Boolean).join(', '));
    if (schema.multipleOf !== undefined) out.push('multiple of ' + schema.multipleOf);
    if (schema.minLength !== undefined) out.push('min length ' + schema.minLength);
    if (schema.maxLength !== undefined) out.push('max length ' + schema.maxLength);
    if (schema.minItems !== undefined) out.push('min items ' + schema.minItems);
    if (schema.maxItems !== undefined) out.push('max items ' + schema.maxItems);
    if (schema.pattern) out.push('pattern ' + schema.pattern);
    if (schema.format) out.push('format ' + schema.format);
    if (schema.contentMediaType) out.push(schema.contentMediaType);
    if (schema.default !== undefined) out.push('default ' + JSON.stringify(schema.default));
    return out;
  }
  function describe(node, schema) {
    constraints(schema).forEach(function (c) { add(node, [' ', el('span', 'constraint', '· ' + c)]); });
    if (schema && schema.description) add(node, [' — ', rich(schema.description)]);
    return node;
  }
  /** Schemas that deserve a nested field list under their name (objects, lists of objects, variants). */
  function nested(schema, seen) {
    if (!schema) return null;
    if (schema.$ref) {
      if (seen.indexOf(schema.$ref) >= 0) return null;
      var target = deref(schema);
      return target.properties || target.oneOf || target.anyOf || (target.items && nested(target.items, seen)) ? fields(target, seen.concat([schema.$ref])) : null;
    }
    if (schema.properties) return fields(schema, seen);
    if (schema.items) return nested(schema.items, seen);
    if (schema.oneOf || schema.anyOf) return fields(schema, seen);
    return null;
  }
  /** A nested list of a schema's fields with their types, ranges, defaults and descriptions. */
  function fields(schema, seen) {
    seen = seen || [];
    if (schema && schema.$ref) {
      if (seen.indexOf(schema.$ref) >= 0) return el('div', 'muted', ['(', schemaLink(schema.$ref), ', see above)']);
      seen = seen.concat([schema.$ref]);
      schema = deref(schema);
    }
    var list = el('ul', 'fields');
    if (schema.properties) {
      var required = schema.required || [];
      Object.keys(schema.properties).forEach(function (name) {
        var prop = schema.properties[name];
        var item = el('li', '', [el('code', 'field-name', name), ' ', typeNode(prop)]);
        if (required.indexOf(name) >= 0) add(item, [' ', el('span', 'req', 'required')]);
        describe(item, prop.$ref ? Object.assign({}, deref(prop), { description: prop.description || deref(prop).description }) : prop);
        add(item, nested(prop, seen));
        list.appendChild(item);
      });
    }
    var variants = schema.oneOf || schema.anyOf;
    if (variants) {
      variants.forEach(function (variant) {
        var item = el('li', '', [el('span', 'muted', 'variant: '), typeNode(variant)]);
        describe(item, variant.$ref ? {} : variant);
        add(item, nested(variant, seen));
        list.appendChild(item);
      });
    }
    if (!schema.properties && !variants) {
      var only = el('li', '', typeNode(schema));
      describe(only, schema);
      add(only, schema.items ? nested(schema.items, seen) : null);
      list.appendChild(only);
    }
    if (schema.if && schema.then) {
      list.appendChild(el('li', 'constraint', 'when ' + JSON.stringify(schema.if.properties || schema.if) + ' then ' + JSON.stringify(schema.then)));
    }
    return list;
  }
  function schemaBlock(schema, collapsed) {
    if (!schema) return el('span', 'muted', 'no schema');
    if (!collapsed || !schema.$ref) return fields(schema, []);
    var box = el('details', 'schema', el('summary', '', refName(schema.$ref)));
    var filled = false;
    box.addEventListener('toggle', function () { if (box.open && !filled) { filled = true; box.appendChild(fields(schema, [])); } });
    return box;
  }

  function authLabel(requirements) {
    if (!requirements || requirements.length === 0) return 'no auth';
    return requirements.map(function (r) { return Object.keys(r).map(function (k) { return k === 'apiKey' ? 'API key' : k === 'adminToken' ? 'admin token' : k; }).join(' + '); }).join(' or ');
  }

  function parametersTable(params) {
    var table = el('table', '', el('tr', '', [el('th', '', 'name'), el('th', '', 'in'), el('th', '', 'type'), el('th', '', 'description')]));
    params.forEach(function (raw) {
      var p = deref(raw);
      var name = el('td', '', el('code', 'field-name', p.name));
      if (p.required) add(name, [' ', el('span', 'req', 'required')]);
      table.appendChild(el('tr', '', [name, el('td', '', p.in), el('td', '', typeNode(p.schema)), describe(el('td', '', p.description ? rich(p.description) : ''), Object.assign({}, p.schema || {}, { description: undefined }))]));
    });
    return table;
  }

  function responseBlock(status, raw) {
    var r = deref(raw);
    var box = el('div', 'resp', [el('span', 'status s' + String(status).charAt(0), status), rich(r.description || '')]);
    var headers = r.headers || {};
    var names = Object.keys(headers);
    if (names.length) {
      var list = el('ul', 'fields');
      names.forEach(function (name) {
        var h = deref(headers[name]);
        list.appendChild(el('li', '', [el('code', 'field-name', name), ' ', typeNode(h.schema), ' — ', rich(headers[name].description || h.description || '')]));
      });
      add(box, [el('div', 'muted', 'headers'), list]);
    }
    var content = r.content || {};
    Object.keys(content).forEach(function (type) {
      var media = content[type];
      add(box, el('div', '', [el('code', '', type)]));
      var isError = media.schema && media.schema.$ref === '#/components/schemas/Error';
      if (!isError) add(box, schemaBlock(media.schema, true));
      if (media['x-event-data']) add(box, [el('div', 'muted', 'event data (JSON after "data: ")'), schemaBlock(media['x-event-data'], false)]);
    });
    return box;
  }

  function operationNode(path, method, op) {
    var id = 'op-' + slug(op.operationId || method + path);
    var head = el('summary', '', [el('span', 'method m-' + (methods.indexOf(method) >= 0 ? method : 'other'), method.toUpperCase()), el('code', 'path', path), el('span', 'summary-text', op.summary || '')]);
    if (op['x-required-tier']) add(head, el('span', 'badge', op['x-required-tier'] + '+ tier'));
    add(head, el('span', 'badge', authLabel(op.security || doc.security)));
    var body = el('div', 'op-body');
    if (op.description) body.appendChild(paragraphs(op.description));
    if (op.parameters && op.parameters.length) add(body, [el('h4', '', 'Parameters'), parametersTable(op.parameters)]);
    if (op.requestBody) {
      var rb = deref(op.requestBody);
      Object.keys(rb.content || {}).forEach(function (type) {
        add(body, [el('h4', '', ['Request body ', el('code', '', type), rb.required ? ' (required)' : ' (optional)']), rb.description ? paragraphs(rb.description) : null, schemaBlock(rb.content[type].schema, false)]);
      });
    }
    add(body, el('h4', '', 'Responses'));
    Object.keys(op.responses || {}).forEach(function (status) { body.appendChild(responseBlock(status, op.responses[status])); });
    var node = el('details', 'op', [head, body]);
    node.id = id;
    node.setAttribute('data-search', [method, path, op.summary || '', op.operationId || ''].join(' ').toLowerCase());
    node.setAttribute('data-label', method.toUpperCase() + ' ' + path);
    return node;
  }

  function render() {
    var info = doc.info || {};
    document.title = (info.title || 'API') + ' — docs';
    $('title').textContent = info.title || 'API';
    $('version').textContent = info.version ? 'v' + info.version + ' · OpenAPI ' + doc.openapi : '';
    var content = $('content');
    var nav = $('nav');
    content.replaceChildren();
    nav.replaceChildren();

    var intro = el('section', '', [el('h2', '', 'Overview'), paragraphs(info.description)]);
    intro.id = 'overview';
    var schemes = (doc.components && doc.components.securitySchemes) || {};
    Object.keys(schemes).forEach(function (name) {
      add(intro, el('p', '', [el('code', '', name), ' ', el('span', 'muted', schemes[name].type + (schemes[name].scheme ? ' ' + schemes[name].scheme : '')), ' — ', rich(schemes[name].description || '')]));
    });
    content.appendChild(intro);
    add(nav, el('div', 'tag', link('#overview', 'Overview')));

    var groups = [];
    var byTag = {};
    (doc.tags || []).forEach(function (t) { byTag[t.name] = { tag: t, ops: [] }; groups.push(byTag[t.name]); });
    Object.keys(doc.paths || {}).forEach(function (path) {
      methods.forEach(function (method) {
        var op = doc.paths[path][method];
        if (!op) return;
        var name = (op.tags && op.tags[0]) || 'Other';
        if (!byTag[name]) { byTag[name] = { tag: { name: name }, ops: [] }; groups.push(byTag[name]); }
        byTag[name].ops.push(operationNode(path, method, op));
      });
    });
    groups.forEach(function (group) {
      if (!group.ops.length) return;
      var section = el('section', 'tag-section', [el('h2', '', group.tag.name), group.tag.description ? rich(group.tag.description, 'p') : null]);
      section.id = 'tag-' + slug(group.tag.name);
      var navGroup = el('div', '', el('div', 'tag', link('#' + section.id, group.tag.name)));
      group.ops.forEach(function (node) {
        section.appendChild(node);
        navGroup.appendChild(link('#' + node.id, node.getAttribute('data-label')));
      });
      group.section = section;
      group.navGroup = navGroup;
      content.appendChild(section);
      nav.appendChild(navGroup);
    });

    var schemas = (doc.components && doc.components.schemas) || {};
    var errors = schemas.ErrorCode && schemas.ErrorCode['x-codes-by-status'];
    if (errors) {
      var table = el('table', '', el('tr', '', [el('th', '', 'status'), el('th', '', 'codes')]));
      Object.keys(errors).forEach(function (status) {
        var codes = el('td');
        errors[status].forEach(function (code, i) { add(codes, [i ? ', ' : '', el('code', '', code)]); });
        table.appendChild(el('tr', '', [el('td', '', status), codes]));
      });
      var errorSection = el('section', '', [el('h2', '', 'Error codes'), table]);
      errorSection.id = 'error-codes';
      content.appendChild(errorSection);
      add(nav, el('div', 'tag', link('#error-codes', 'Error codes')));
    }
    var schemaSection = el('section', '', el('h2', '', 'Schemas'));
    schemaSection.id = 'schemas';
    Object.keys(schemas).forEach(function (name) {
      var box = el('details', 'op', [el('summary', '', el('code', 'path', name)), el('div', 'op-body', fields(schemas[name], ['#/components/schemas/' + name]))]);
      box.id = 'schema-' + slug(name);
      schemaSection.appendChild(box);
    });
    content.appendChild(schemaSection);
    add(nav, el('div', 'tag', link('#schemas', 'Schemas')));

    $('filter').addEventListener('input', function () { filter(groups, $('filter').value); });
    openTarget();
  }

  function link(href, label) { var a = el('a', '', label); a.href = href; return a; }

  function filter(groups, query) {
    var words = String(query).toLowerCase().split(/\s+/).filter(Boolean);
    groups.forEach(function (group) {
      if (!group.section) return;
      var visible = 0;
      group.ops.forEach(function (node) {
        var hay = node.getAttribute('data-search') + ' ' + group.tag.name.toLowerCase();
        var show = words.every(function (w) { return hay.indexOf(w) >= 0; });
        node.hidden = !show;
        if (show) visible++;
      });
      group.section.hidden = visible === 0;
    });
  }

  function openTarget() {
    var id = '';
    try { id = decodeURIComponent(String(location.hash || '').slice(1)); } catch (e) { id = ''; }
    var target = id ? $(id) : null;
    if (!target) return;
    if (target.tagName === 'DETAILS') target.open = true;
    if (target.scrollIntoView) target.scrollIntoView();
  }

  var expanded = false;
  $('expand').addEventListener('click', function () {
    var all = document.getElementsByTagName('details');
    expanded = !expanded;
    for (var i = 0; i < all.length; i++) if (all[i].className === 'op') all[i].open = expanded;
    $('expand').textContent = expanded ? 'Collapse all' : 'Expand all';
  });
  window.addEventListener('hashchange', openTarget);

  fetch('/openapi.json', { headers: { accept: 'application/json' } })
    .then(function (response) {
      if (!response.ok) throw new Error('HTTP ' + response.status);
      return response.json();
    })
    .then(function (body) { doc = body; render(); })
    .catch(function (error) {
      var status = $('status');
      status.className = 'error';
      status.textContent = 'Could not load /openapi.json: ' + (error && error.message ? error.message : String(error));
    });
})();
`;

/** The /docs page; `nonce` is the one the response's Content-Security-Policy allows. */
export function docsPage(nonce: string): string {
  const n = checkedNonce(nonce);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>API documentation</title>
<style nonce="${n}">${style}</style>
</head>
<body>
<header class="top">
  <h1 id="title">API documentation</h1><span class="version" id="version"></span>
  <input id="filter" type="search" placeholder="Filter operations" aria-label="Filter operations">
  <button id="expand" type="button">Expand all</button>
</header>
<div class="layout">
  <nav id="nav" aria-label="Sections"></nav>
  <main id="content">
    <p id="status" class="muted">Loading <a href="/openapi.json">/openapi.json</a>…</p>
    <noscript><p>This page needs JavaScript. The document itself is at <a href="/openapi.json">/openapi.json</a>.</p></noscript>
  </main>
</div>
<script nonce="${n}">${script}</script>
</body>
</html>
`;
}
