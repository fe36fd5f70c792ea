// What the capture buffer's tests share: the HAR's CallBuffer (built from ets/ by
// benches/capture-code.mjs) and a pipeline in front of it.
import { bufferFor, loadCaptureModule } from '../../../benches/capture-code.mjs';
import { drainBatches, ofType, openPipeline } from './helpers.mjs';

export const { CallBuffer, CAPTURE_LINGER_MS } = await loadCaptureModule();

/** A pipeline and its capture buffer, the ingest crossings counted. */
export function captured(t, extra = {}, limits = {}, clock = undefined) {
  const { p } = openPipeline(t, extra);
  const crossings = { n: 0 };
  const counted = { ingest: (...a) => (crossings.n++, p.ingest(...a)) };
  const calls = bufferFor(CallBuffer, counted, limits, clock);
  return { p, calls, crossings };
}

export const nextTurn = () => new Promise((r) => setTimeout(r, 0));
/** Every document of the pipeline's sealed batches, delivered. */
export const docsOf = (p) => drainBatches(p).flatMap((b) => b.docs);
export const actionNames = (docs) => ofType(docs, 'action').map((d) => d.action.target.name);
