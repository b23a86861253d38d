// Preloaded into `promptfoo view` (NODE_OPTIONS=--require ...) by `make view` and the browser test.
// Promptfoo 0.123.1 has no option for either of these, so they are set from outside its code:
// - its server calls listen(port) with no host, i.e. on every interface: here a listen with a port and
//   no host gets GHOST_EVAL_VIEW_HOST (default 127.0.0.1; `make view HOST=0.0.0.0` to share on purpose);
// - its page starts PostHog analytics against an outside host whatever PROMPTFOO_DISABLE_TELEMETRY
//   says: every response carries a Content-Security-Policy that lets the page load from and talk to
//   its own server only, so the browser never sends those requests.
'use strict';
const net = require('node:net');
const http = require('node:http');

const host = process.env.GHOST_EVAL_VIEW_HOST || '127.0.0.1';
const policy = [
  "default-src 'self'",
  "script-src 'self' 'unsafe-inline' 'unsafe-eval'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
].join('; ');

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const port = args[0];
  const isPort = typeof port === 'number' || (typeof port === 'string' && /^\d+$/.test(port));
  if (isPort && typeof args[1] !== 'string') args.splice(1, 0, host);
  return listen.apply(this, args);
};

const writeHead = http.ServerResponse.prototype.writeHead;
http.ServerResponse.prototype.writeHead = function (...args) {
  if (!this.headersSent && !this.getHeader('content-security-policy')) {
    this.setHeader('Content-Security-Policy', policy);
  }
  return writeHead.apply(this, args);
};
