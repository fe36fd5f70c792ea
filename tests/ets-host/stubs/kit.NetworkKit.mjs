// Run-time stand-in for @kit.NetworkKit:
//   http       — over node:http / node:https, with the SDK's request options (method, header,
//                extraData, timeouts, expectDataType) and response fields (responseCode, result,
//                header, performanceTiming measured on the socket: cumulative ms as the
//                platform gives them);
//   connection — a default network a test drives through `connection.host`: getDefaultNetSync /
//                getNetCapabilitiesSync read it (netId 0: none), createNetConnection() objects
//                take on(...) listeners and register / unregister (callbacks a microtask later,
//                as the device answers asynchronously); `host.connect(netId, bearerTypes)`,
//                `host.lose()`, `host.unavailable()` and `host.fire(type, arg)` call the listeners
//                of every registered NetConnection; `host.errors.<function>` makes that function
//                throw (register: fail through its callback, as a missing permission does, 201);
//                `host.reset()` restores a Wi-Fi default network (netId 100) and no connections.
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
      // performanceTiming as the platform measures it: ms from the start to the end of each step.
      const t0 = performance.now();
      const since = () => performance.now() - t0;
      const timing = {
        dnsTiming: 0, tcpTiming: 0, tlsTiming: 0, firstSendTiming: 0, firstReceiveTiming: 0, totalFinishTiming: 0,
        redirectTiming: 0, responseHeaderTiming: 0, responseBodyTiming: 0, totalTiming: 0
      };
      req.on('socket', (socket) => {
        socket.once('lookup', () => { timing.dnsTiming = since(); });
        socket.once('connect', () => { timing.tcpTiming = since(); });
        socket.once('secureConnect', () => { timing.tlsTiming = since(); });
      });
      req.on('finish', () => { timing.firstSendTiming = since(); });
      const timeout = options.readTimeout ?? 60000;
      req.setTimeout(timeout, () => req.destroy(businessError(2300028, 'timeout')));
      req.on('error', (e) => {
        this.inFlight.delete(req);
        reject(e.code === 2300028 ? e : businessError(2300007, `couldn't connect to ${url}: ${e.message}`));
      });
      req.on('response', (res) => {
        timing.firstReceiveTiming = since();
        timing.responseHeaderTiming = timing.firstReceiveTiming;
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          timing.totalFinishTiming = since();
          timing.responseBodyTiming = timing.totalFinishTiming;
          timing.totalTiming = timing.totalFinishTiming;
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
            cookies: '',
            performanceTiming: timing
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

// ---- connection ----

const NetBearType = { BEARER_CELLULAR: 0, BEARER_WIFI: 1, BEARER_BLUETOOTH: 2, BEARER_ETHERNET: 3, BEARER_VPN: 4 };
const NetCap = {
  NET_CAPABILITY_MMS: 0, NET_CAPABILITY_NOT_METERED: 11, NET_CAPABILITY_INTERNET: 12, NET_CAPABILITY_NOT_VPN: 15,
  NET_CAPABILITY_VALIDATED: 16, NET_CAPABILITY_PORTAL: 17, NET_CAPABILITY_CHECKING_CONNECTIVITY: 31
};

const WIFI_NET_ID = 100;
const EVENTS = new Set(['netAvailable', 'netBlockStatusChange', 'netCapabilitiesChange', 'netConnectionPropertiesChange',
  'netLost', 'netUnavailable']);

const handle = (netId) => ({ netId });
const capabilities = (bearerTypes) => ({
  linkUpBandwidthKbps: 0,
  linkDownBandwidthKbps: 0,
  networkCap: [NetCap.NET_CAPABILITY_INTERNET, NetCap.NET_CAPABILITY_VALIDATED],
  bearerTypes: [...bearerTypes]
});

function noErrors() {
  return {
    getDefaultNetSync: null, getNetCapabilitiesSync: null, createNetConnection: null, register: null, unregister: null
  };
}

const netHost = {
  /** netId → bearer types of the networks that are up. */
  networks: new Map([[WIFI_NET_ID, [NetBearType.BEARER_WIFI]]]),
  defaultNetId: WIFI_NET_ID,
  errors: noErrors(),
  /** Every NetConnection created, registered or not. */
  connections: [],
  calls: { getDefaultNetSync: 0, getNetCapabilitiesSync: 0, createNetConnection: 0, register: 0, unregister: 0 },

  reset() {
    this.networks = new Map([[WIFI_NET_ID, [NetBearType.BEARER_WIFI]]]);
    this.defaultNetId = WIFI_NET_ID;
    this.errors = noErrors();
    this.connections = [];
    for (const k of Object.keys(this.calls)) this.calls[k] = 0;
  },

  registered() {
    return this.connections.filter((c) => c.registered);
  },

  fire(type, arg) {
    for (const c of this.registered()) {
      for (const listener of c.listeners.get(type) ?? []) listener(arg);
    }
  },

  /** A network comes up and becomes the default one: netAvailable, then netCapabilitiesChange. */
  connect(netId, bearerTypes) {
    this.networks.set(netId, [...bearerTypes]);
    this.defaultNetId = netId;
    this.fire('netAvailable', handle(netId));
    this.fire('netCapabilitiesChange', { netHandle: handle(netId), netCap: capabilities(bearerTypes) });
  },

  /** A network goes away (default: the default one, leaving none): netLost. */
  lose(netId = this.defaultNetId) {
    this.networks.delete(netId);
    if (this.defaultNetId === netId) {
      this.defaultNetId = 0;
    }
    this.fire('netLost', handle(netId));
  },

  unavailable() {
    this.defaultNetId = 0;
    this.fire('netUnavailable', undefined);
  }
};

function maybeThrow(name) {
  netHost.calls[name]++;
  const e = netHost.errors[name];
  if (e !== null && e !== undefined) {
    throw e;
  }
}

class NetConnection {
  constructor() {
    this.listeners = new Map();
    this.registered = false;
  }

  on(type, callback) {
    if (!EVENTS.has(type) || typeof callback !== 'function') {
      throw businessError(401, `NetConnection.on: bad arguments (${type})`);
    }
    if (!this.listeners.has(type)) this.listeners.set(type, []);
    this.listeners.get(type).push(callback);
  }

  register(callback) {
    netHost.calls.register++;
    const e = netHost.errors.register;
    if (e === null && this.registered) {
      queueMicrotask(() => callback(businessError(2101008, 'The callback already exists.')));
      return;
    }
    if (e === null) {
      this.registered = true;
    }
    queueMicrotask(() => callback(e ?? undefined));
  }

  unregister(callback) {
    maybeThrow('unregister');
    const wasRegistered = this.registered;
    this.registered = false;
    queueMicrotask(() => callback(wasRegistered ? undefined : businessError(2101007, 'The callback does not exist.')));
  }
}

export const connection = {
  NetBearType,
  NetCap,
  createNetConnection(netSpecifier, timeout) {
    maybeThrow('createNetConnection');
    const c = new NetConnection();
    netHost.connections.push(c);
    return c;
  },
  getDefaultNetSync() {
    maybeThrow('getDefaultNetSync');
    return handle(netHost.defaultNetId);
  },
  getNetCapabilitiesSync(netHandle) {
    maybeThrow('getNetCapabilitiesSync');
    const bearers = netHost.networks.get(netHandle?.netId);
    if (bearers === undefined) {
      throw businessError(2100001, 'Invalid parameter value.');
    }
    return capabilities(bearers);
  },
  host: netHost
};
