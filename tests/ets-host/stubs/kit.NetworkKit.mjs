// Run-time stand-in for @kit.NetworkKit: `http` over node:http / node:https, with the SDK's
// request options (method, header, extraData, timeouts, expectDataType) and response fields
// (responseCode, result, header).
import * as nodeHttp from 'node:http';
import * as nodeHttps from 'node:https';

const RequestMethod = {
  OPTIONS: 'OPTIONS', GET: 'GET', HEAD: 'HEAD', POST: 'POST', PUT: 'PUT', DELETE: 'DELETE', TRACE: 'TRACE',
  CONNECT: 'CONNECT'
};
const HttpDataType = { STRING: 0, OBJECT: 1, ARRAY_BUFFER: 2 };
const ResponseCode = {
  OK: 200, CREATED: 201, ACCEPTED: 202, NOT_AUTHORITATIVE: 203, NO_CONTENT: 204, BAD_REQUEST: 400,
  UNAUTHORIZED: 401, FORBIDDEN: 403, NOT_FOUND: 404, CLIENT_TIMEOUT: 408, ENTITY_TOO_LARGE: 413,
  INTERNAL_ERROR: 500, UNAVAILABLE: 503
};

/** A rejected request, shaped like the SDK's BusinessError (2300007: couldn't connect). */
function businessError(code, message) {
  const e = new Error(message);
  e.code = code;
  return e;
}

function body(extraData) {
  if (extraData === undefined || extraData === null) {
    return undefined;
  }
  if (extraData instanceof ArrayBuffer) {
    return Buffer.from(extraData);
  }
  if (ArrayBuffer.isView(extraData)) {
    return Buffer.from(extraData.buffer, extraData.byteOffset, extraData.byteLength);
  }
  return typeof extraData === 'string' ? extraData : JSON.stringify(extraData);
}

class HttpRequest {
  constructor() {
    this.inFlight = new Set();
  }

  request(url, options, callback) {
    if (typeof options === 'function') {
      callback = options;
      options = {};
    }
    const promise = this.send(url, options ?? {});
    if (typeof callback === 'function') {
      promise.then((r) => callback(undefined, r), (e) => callback(e, undefined));
      return undefined;
    }
    return promise;
  }

  send(url, options) {
    return new Promise((resolve, reject) => {
      let target;
      try {
        target = new URL(url);
      } catch {
        reject(businessError(401, `invalid url ${url}`));
        return;
      }
      const lib = target.protocol === 'https:' ? nodeHttps : nodeHttp;
      const payload = body(options.extraData);
      const headers = { ...(options.header ?? {}) };
      if (payload !== undefined) {
        headers['Content-Length'] = Buffer.byteLength(payload);
      }
      const req = lib.request(target, { method: options.method ?? RequestMethod.GET, headers });
      this.inFlight.add(req);
      const timeout = options.readTimeout ?? 60000;
      req.setTimeout(timeout, () => req.destroy(businessError(2300028, 'timeout')));
      req.on('error', (e) => {
        this.inFlight.delete(req);
        reject(e.code === 2300028 ? e : businessError(2300007, `couldn't connect to ${url}: ${e.message}`));
      });
      req.on('response', (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          this.inFlight.delete(req);
          const all = Buffer.concat(chunks);
          const result = options.expectDataType === HttpDataType.ARRAY_BUFFER
            ? all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength)
            : all.toString('utf8');
          resolve({
            result,
            resultType: options.expectDataType ?? HttpDataType.STRING,
            responseCode: res.statusCode,
            header: res.headers,
            cookies: ''
          });
        });
        res.on('error', (e) => reject(businessError(2300056, e.message)));
      });
      req.end(payload);
    });
  }

  destroy() {
    for (const req of this.inFlight) {
      req.destroy();
    }
    this.inFlight.clear();
  }
}

export const http = {
  createHttp: () => new HttpRequest(),
  RequestMethod,
  HttpDataType,
  ResponseCode
};
