// The loopback intake and the uploader of the intake scenario.
//
// The intake runs in the orchestrator (another process, like a real intake is another machine), on
// 127.0.0.1, and accepts `POST /api/v2/rum` with NDJSON bodies. It counts documents by type, and
// counts an action seen twice (same action.id) or a view version seen twice as a duplicate.
//
// The uploader runs in the sample process, on its main thread, with the seed SDK's default cadence:
// a cycle every 2,000 ms sends up to 20 batches; a failed upload releases its batch and doubles the
// delay before the next cycle, up to 60 s; a success restores the 2,000 ms period.

import http from 'node:http';
import zlib from 'node:zlib';
import { UPLOADER } from './scenarios.mjs';

export async function startIntake() {
  const counts = {
    requests: 0, bytes: 0, documents: 0, byType: {}, malformed: 0,
    actions: 0, duplicateActions: 0, duplicateViewVersions: 0, lastActionAt: 0,
  };
  const actionIds = new Set();
  const viewVersions = new Set();
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    if (req.method !== 'POST' || url.pathname !== '/api/v2/rum') {
      res.writeHead(404).end();
      return;
    }
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const wire = Buffer.concat(chunks);
      // The native pipeline hands out sealed batches gzip-compressed, sent as they are.
      const body = (/^gzip$/i.test(req.headers['content-encoding'] ?? '') ? zlib.gunzipSync(wire) : wire).toString('utf8');
      counts.requests += 1;
      counts.bytes += wire.length;
      for (const line of body.split('\n')) {
        if (!line) continue;
        let doc;
        try {
          doc = JSON.parse(line);
        } catch {
          counts.malformed += 1;
          continue;
        }
        counts.documents += 1;
        const type = typeof doc?.type === 'string' ? doc.type : '(none)';
        counts.byType[type] = (counts.byType[type] ?? 0) + 1;
        if (type === 'action') {
          const id = doc.action?.id;
          if (actionIds.has(id)) counts.duplicateActions += 1;
          else actionIds.add(id);
          counts.lastActionAt = Date.now();
        } else if (type === 'view') {
          const key = `${doc.view?.id}/${doc._dd?.document_version}`;
          if (viewVersions.has(key)) counts.duplicateViewVersions += 1;
          else viewVersions.add(key);
        }
      }
      counts.actions = actionIds.size;
      res.writeHead(202, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}/api/v2/rum`,
    counts,
    close: () => new Promise((resolve) => {
      server.closeAllConnections?.();
      server.close(() => resolve());
    }),
  };
}

/**
 * POSTs one batch body, as it is (a gzip body says so with Content-Encoding, as RumUploader sends
 * it); resolves true on a 2xx answer, false on anything else.
 */
function post(agent, url, body, encoding) {
  return new Promise((resolve) => {
    const headers = { 'content-type': 'text/plain;charset=UTF-8', 'content-length': body.byteLength };
    if (encoding === 'gzip') headers['content-encoding'] = 'gzip';
    const req = http.request(url, {
      method: 'POST', agent,
      headers,
    }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode >= 200 && res.statusCode < 300));
    });
    req.on('error', () => resolve(false));
    req.end(body);
  });
}

/**
 * Drives `source` (anything with nextBatch / completeBatch) on the seed cadence until stopped.
 * `cycles` records each cycle's start, how many batches it sent and whether it found the store empty.
 */
export class Uploader {
  #source;
  #url;
  #agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  #timer = null;
  #delay = UPLOADER.periodMs;
  #stopped = false;
  cycles = [];
  batchesSent = 0;
  failures = 0;

  constructor(source, url) {
    this.#source = source;
    this.#url = url;
  }

  start() {
    this.#timer = setTimeout(() => this.#cycle(), this.#delay);
  }

  async #cycle() {
    const cycle = { at: performance.now(), sent: 0, empty: false, failed: false };
    this.cycles.push(cycle);
    for (let i = 0; i < UPLOADER.maxBatchesPerCycle && !this.#stopped; i++) {
      const batch = this.#source.nextBatch();
      if (!batch) {
        cycle.empty = true;
        break;
      }
      const ok = await post(this.#agent, this.#url, Buffer.from(batch.body), batch.encoding);
      this.#source.completeBatch(batch.id, ok);
      if (!ok) {
        cycle.failed = true;
        this.failures += 1;
        break;
      }
      cycle.sent += 1;
      this.batchesSent += 1;
    }
    this.#delay = cycle.failed
      ? Math.min(this.#delay * UPLOADER.backoffFactor, UPLOADER.maxBackoffMs)
      : UPLOADER.periodMs;
    cycle.end = performance.now();
    if (!this.#stopped) this.#timer = setTimeout(() => this.#cycle(), this.#delay);
  }

  /** Resolves after a cycle that started after `t` found nothing left to send. */
  async drained(t, { timeoutMs }) {
    const t0 = performance.now();
    for (;;) {
      const done = this.cycles.find((c) => c.at >= t && c.empty && !c.failed);
      if (done) return done;
      if (performance.now() - t0 > timeoutMs) throw new Error(`uploader not drained after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  stop() {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#agent.destroy();
  }
}
