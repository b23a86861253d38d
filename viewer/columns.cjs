// Preloaded into `promptfoo view` (NODE_OPTIONS=--require ...) next to local-only.cjs by `make view` and the browser
// test, so that a suite's model columns sit side by side in a 1600 px window.
// Promptfoo 0.123.1 sizes its results table in inline styles, with no setting for it: each model's column 480 px,
// the description and each variable 160-360 px from the length of its text (8 px a character + 48, so always a
// multiple of 8), and the table the sum. Three models then need about 2300 px. This adds a stylesheet to the page
// Promptfoo serves that overrides exactly those default widths: a model column 400 px, a variable or description
// column 80-136 px (in proportion to Promptfoo's width, its text wraps), the table the window's width (wider when
// its columns need more), and the side padding of headers and variable cells halved. Nothing is hidden. A column
// someone resizes by hand has another width, which no rule matches: Promptfoo's own size for it applies.
'use strict';
const http = require('node:http');

const MODEL_WIDTH = { promptfoo: 480, here: 400 };
const VARIABLE_WIDTH = { promptfoo: [160, 360], step: 8, here: [80, 136] };

/** The width a variable column Promptfoo makes `width` px wide gets here. */
function variableWidth(width) {
  const [from, to] = VARIABLE_WIDTH.promptfoo;
  const [narrow, wide] = VARIABLE_WIDTH.here;
  return Math.round(narrow + ((width - from) * (wide - narrow)) / (to - from));
}

/** One rule per default width: React writes a <col>'s width as the attribute `style="width: Npx;"`. */
function stylesheet() {
  const col = (from, to) => `.results-table col[style="width: ${from}px;"] { width: ${to}px !important; }`;
  const rules = ['.results-table { width: 100% !important; }', col(MODEL_WIDTH.promptfoo, MODEL_WIDTH.here)];
  const [from, to] = VARIABLE_WIDTH.promptfoo;
  for (let width = from; width <= to; width += VARIABLE_WIDTH.step) rules.push(col(width, variableWidth(width)));
  rules.push('.results-table th, .results-table td.variable .cell { padding-left: 0.5rem; padding-right: 0.5rem; }');
  return `<style id="ghost-eval-columns">\n${rules.join('\n')}\n</style>`;
}

const STYLE = stylesheet();
const PAGE = Symbol('ghost-eval page body');

// The page is Promptfoo's index.html, sent for any address the browser navigates to. Such a request is answered
// uncompressed and in full (no 304 for a copy cached without the stylesheet), so its body can be rewritten here.
const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function (event, req, ...rest) {
  if (event === 'request' && String(req.headers.accept || '').includes('text/html')) {
    for (const name of ['accept-encoding', 'if-none-match', 'if-modified-since']) delete req.headers[name];
  }
  return emit.call(this, event, req, ...rest);
};

function isPage(res) {
  return res.req?.method === 'GET' && /^text\/html/.test(String(res.getHeader('content-type') || ''));
}

/** Decides once, before the headers go out, whether this response is the page; if so its body is held back. */
function claim(res) {
  if (res[PAGE] !== undefined) return res[PAGE];
  res[PAGE] = !res.headersSent && isPage(res) ? [] : null;
  if (res[PAGE]) {
    for (const name of ['Content-Length', 'ETag', 'Last-Modified']) res.removeHeader(name);
    res.setHeader('Cache-Control', 'no-store');
  }
  return res[PAGE];
}

function toBuffer(chunk, encoding) {
  return Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk, typeof encoding === 'string' ? encoding : 'utf8');
}

const writeHead = http.ServerResponse.prototype.writeHead;
http.ServerResponse.prototype.writeHead = function (...args) {
  claim(this);
  return writeHead.apply(this, args);
};

const write = http.ServerResponse.prototype.write;
http.ServerResponse.prototype.write = function (chunk, encoding, callback) {
  const held = claim(this);
  if (!held) return write.call(this, chunk, encoding, callback);
  held.push(toBuffer(chunk, encoding));
  const done = typeof encoding === 'function' ? encoding : callback;
  if (done) process.nextTick(done);
  return true;
};

const end = http.ServerResponse.prototype.end;
http.ServerResponse.prototype.end = function (chunk, encoding, callback) {
  const held = claim(this);
  if (!held) return end.call(this, chunk, encoding, callback);
  if (chunk && typeof chunk !== 'function') held.push(toBuffer(chunk, encoding));
  const done = [chunk, encoding, callback].find((arg) => typeof arg === 'function');
  const html = Buffer.concat(held).toString('utf8').replace('</head>', `${STYLE}\n</head>`);
  return end.call(this, html, 'utf8', done);
};
