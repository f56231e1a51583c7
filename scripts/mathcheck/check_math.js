#!/usr/bin/env node
// Typeset every formula of the built book with MathJax 3.2.2 (the version the book vendors in
// _static/mathjax) and fail on any formula MathJax rejects: "\tag not allowed in split",
// undefined macros, unbalanced braces, ...  The strict Sphinx build cannot see these: Sphinx
// passes TeX through untouched and MathJax only parses it in the reader's browser.
//
// Usage: node check_math.js [HTML_DIR]        (default: _build/html)
// Exit 0: every formula typesets; 1: MathJax errors (listed with page and formula);
// 2: nothing to check or a broken checker.
//
// Each page is processed as the browser does it: the page's own `window.MathJax = {...}`
// configuration (macros, delimiters, processHtmlClass/ignoreHtmlClass) is applied, MathJax's
// HTML handler finds the math in the DOM (\(..\), \[..\], $$..$$, bare \begin{env}), and the
// TeX input jax compiles each formula. Sphinx's wrapping is therefore seen exactly as the
// browser sees it (a display formula holding \\ is wrapped in \begin{split}..\end{split}).
// Packages: every TeX package the browser build can autoload, minus `noerrors` and
// `noundefined`, so that an undefined macro is an error here (in the browser it shows red).
'use strict';

const fs = require('fs');
const path = require('path');

const {mathjax} = require('mathjax-full/js/mathjax.js');
const {TeX} = require('mathjax-full/js/input/tex.js');
const {liteAdaptor} = require('mathjax-full/js/adaptors/liteAdaptor.js');
const {RegisterHTMLHandler} = require('mathjax-full/js/handlers/html.js');
const {AllPackages} = require('mathjax-full/js/input/tex/AllPackages.js');

const MATHJAX_VERSION = mathjax.version;
// bussproofs (proof trees) needs an output jax to measure boxes; the book has no proof trees.
const PACKAGES = AllPackages.filter((p) => !['noerrors', 'noundefined', 'bussproofs'].includes(p));

const adaptor = liteAdaptor();
RegisterHTMLHandler(adaptor);

function htmlFiles(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, {withFileTypes: true})) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name === '_static' || entry.name === '_sources' || entry.name.startsWith('.')) continue;
      out.push(...htmlFiles(full));
    } else if (entry.name.endsWith('.html')) {
      out.push(full);
    }
  }
  return out.sort();
}

// The page's MathJax configuration, as Sphinx writes it: <script>window.MathJax = {...}</script>
function pageConfig(html) {
  const m = html.match(/window\.MathJax\s*=\s*(\{[\s\S]*?\})\s*<\/script>/);
  if (!m) return null;
  try {
    return JSON.parse(m[1]);
  } catch (err) {
    throw new Error(`cannot parse the page's window.MathJax configuration: ${err.message}`);
  }
}

function loadsMathJax(html) {
  return /<script[^>]+src="[^"]*(tex-mml-chtml|tex-chtml|tex-svg|tex-mml-svg|startup)\.js/.test(html);
}

// Typeset `html` (a page, or a fragment) with TeX options `texOptions` and document options
// `docOptions`; return [{tex, display, error}] for every formula and its first error, if any.
function typeset(html, texOptions, docOptions) {
  const tex = new TeX(Object.assign({}, texOptions, {packages: PACKAGES}));
  const doc = mathjax.document(html, Object.assign({}, docOptions, {InputJax: tex}));
  doc.findMath();
  doc.compile();
  const results = [];
  for (const item of doc.math) {
    let error = null;
    if (item.root) {
      item.root.walkTree((node) => {
        if (error === null && node.isKind && node.isKind('merror')) {
          error = node.attributes.get('data-mjx-error') || textOf(node) || 'MathJax error';
        }
      });
    } else {
      error = 'MathJax produced no output';
    }
    results.push({tex: item.math, display: item.display, error});
  }
  // An element Sphinx marked as math in which MathJax finds no formula at all is shown raw
  // in the browser (e.g. a brace left open swallows the closing \)): report it too.
  const covered = new Set();
  for (const item of doc.math) {
    for (let n = item.start.node; n; n = adaptor.parent(n)) {
      if (adaptor.kind(n) !== '#text' && hasClass(n, 'math')) {
        covered.add(n);
        break;
      }
    }
  }
  for (const tag of ['span', 'div']) {
    for (const el of adaptor.tags(adaptor.body(doc.document), tag)) {
      if (!hasClass(el, 'math') || covered.has(el)) continue;
      const text = adaptor.textContent(el);
      if (text.trim()) {
        results.push({tex: text, display: tag === 'div',
                      error: 'MathJax finds no formula here (unbalanced braces or delimiters?)'});
      }
    }
  }
  return results;
}

function hasClass(node, name) {
  const cls = adaptor.getAttribute(node, 'class');
  return typeof cls === 'string' && cls.split(/\s+/).includes(name);
}

function textOf(node) {
  let s = '';
  node.walkTree((n) => {
    if (n.isToken && n.getText) s += n.getText();
  });
  return s;
}

function texOptionsFrom(config) {
  const texConfig = Object.assign({}, (config && config.tex) || {});
  delete texConfig.packages; // component-style package lists are not for the direct API
  return texConfig;
}

function docOptionsFrom(config) {
  const opts = (config && config.options) || {};
  const out = {};
  for (const key of ['processHtmlClass', 'ignoreHtmlClass', 'skipHtmlTags', 'includeHtmlTags']) {
    if (key in opts) out[key] = opts[key];
  }
  return out;
}

// The checker must itself catch a known error and pass a known good formula; otherwise a
// change in MathJax's API would make this check pass silently.
function selfTest() {
  const page = (body) => `<html><body><div class="math">${body}</div></body></html>`;
  const opts = [{macros: {R: '\\mathbb{R}'}}, {}];
  const bad = [
    ['\\[\\begin{split}a &= b \\\\ c &= d \\tag{1}\\end{split}\\]', /not allowed in split/],
    ['\\(\\undefinedmacro x\\)', /Undefined control sequence/],
    ['\\(\\frac{a}{b\\)', /finds no formula/],
    ['\\[x^{2}}\\]', /Extra close brace/],
  ];
  for (const [b, expected] of bad) {
    const r = typeset(page(b), ...opts);
    if (r.length !== 1 || !r[0].error || !expected.test(r[0].error)) {
      throw new Error(`self-test: the checker did not flag ${b} as ${expected}: ${JSON.stringify(r)}`);
    }
  }
  const good = '\\[\\begin{aligned} x &\\in \\R \\\\ y &= \\sqrt{2} \\end{aligned}\\tag{1}\\]';
  const r = typeset(page(good), ...opts);
  if (r.length !== 1 || r[0].error) {
    throw new Error(`self-test: the checker flagged a valid formula: ${r.length ? r[0].error : 'none found'}`);
  }
}

function snippet(tex) {
  const s = tex.replace(/\s+/g, ' ').trim();
  return s.length > 160 ? s.slice(0, 157) + '...' : s;
}

function main() {
  const dir = path.resolve(process.argv[2] || '_build/html');
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) {
    console.error(`check_math: no built HTML at ${dir} (build the book first)`);
    return 2;
  }
  selfTest();
  const files = htmlFiles(dir);
  if (files.length === 0) {
    console.error(`check_math: no .html files under ${dir}`);
    return 2;
  }
  let nPages = 0;
  let nMath = 0;
  const failures = [];
  for (const file of files) {
    const rel = path.relative(dir, file);
    const html = fs.readFileSync(file, 'utf8');
    let config;
    try {
      config = pageConfig(html);
    } catch (err) {
      failures.push({page: rel, tex: '', error: err.message});
      continue;
    }
    // math nodes, or executed outputs with TeX (claims tables: class mathjax_process)
    const hasMathMarkup = /<[a-z][a-z0-9]*\s[^>]*class="[^"]*\b(math|mathjax_process)\b[^"]*"/.test(html);
    if (!loadsMathJax(html)) {
      if (hasMathMarkup) {
        failures.push({page: rel, tex: '', error: 'page holds math but loads no MathJax script'});
      }
      continue;
    }
    nPages += 1;
    const results = typeset(html, texOptionsFrom(config), docOptionsFrom(config));
    nMath += results.length;
    for (const r of results) {
      if (r.error) failures.push({page: rel, tex: r.tex, display: r.display, error: r.error});
    }
  }
  for (const f of failures) {
    const where = f.tex ? `${f.display ? 'display' : 'inline'} math: ${snippet(f.tex)}` : '';
    console.log(`MATH ERROR ${f.page}: ${f.error}${where ? `\n    ${where}` : ''}`);
  }
  const summary = `check_math: MathJax ${MATHJAX_VERSION}, ${files.length} pages (${nPages} with MathJax), ` +
    `${nMath} formulas, ${failures.length} error(s)`;
  if (failures.length) {
    console.log(summary);
    return 1;
  }
  console.log(summary);
  return 0;
}

try {
  process.exitCode = main();
} catch (err) {
  console.error(`check_math: ${err.stack || err}`);
  process.exitCode = 2;
}
