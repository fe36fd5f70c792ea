// stalls.svg: main-thread gaps over time during the 3,700-action burst, baseline above native, on
// the same axes so that their sizes compare directly. Each bar is a stretch during which the 1 ms
// ticker could not run: it spans the time it lasted and is as tall as it was long.

const W = 960;
const PANEL_H = 190;
const M = { left: 70, right: 24, top: 122, gap: 58, bottom: 56 };
const FRAME_MS = 1000 / 60;
const MIN_DRAWN_MS = 2;

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function niceStep(range, targetTicks) {
  const raw = range / targetTicks;
  const p = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw) ?? 10 * p;
}

/**
 * panels: [{ title, points: [[endMs, gapMs], ...], longestMs }] (time relative to the loop's start).
 * caption: a line saying what was measured (samples, machine).
 */
export function stallsSvg(panels, caption) {
  const all = panels.flatMap((p) => p.points);
  const tMin = Math.min(-5, ...all.map(([t, g]) => t - g));
  const tMax = Math.max(50, ...all.map(([t]) => t)) * 1.02;
  const gMax = Math.max(FRAME_MS * 1.5, ...all.map(([, g]) => g)) * 1.08;
  const plotW = W - M.left - M.right;
  const x = (t) => M.left + ((t - tMin) / (tMax - tMin)) * plotW;
  const H = M.top + panels.length * PANEL_H + (panels.length - 1) * M.gap + M.bottom;
  const out = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, -apple-system, 'Segoe UI', sans-serif" font-size="12">`);
  out.push(`<rect width="${W}" height="${H}" fill="#ffffff"/>`);
  out.push(`<text x="${M.left}" y="26" font-size="17" font-weight="600">Main-thread stalls while 3,700 actions are recorded in one loop</text>`);
  out.push(`<text x="${M.left}" y="46" fill="#444">Each bar: a stretch when a 1 ms ticker on the main thread could not run; its width is when, its height how long (ms).</text>`);
  out.push(`<text x="${M.left}" y="63" fill="#444">Same axes in both panels. Dashed line: one 60 Hz frame (16.7 ms); red bars are longer than a frame.</text>`);
  out.push(`<text x="${M.left}" y="80" fill="#777">${esc(caption)}</text>`);
  const xStep = niceStep(tMax - tMin, 10);
  const yStep = niceStep(gMax, 5);
  panels.forEach((panel, i) => {
    const top = M.top + i * (PANEL_H + M.gap);
    const bottom = top + PANEL_H;
    const y = (g) => bottom - (g / gMax) * PANEL_H;
    out.push(`<text x="${M.left}" y="${top - 8}" font-size="14" font-weight="600">${esc(panel.title)}</text>`);
    out.push(`<text x="${W - M.right}" y="${top - 8}" font-size="14" text-anchor="end" font-weight="600" fill="${panel.longestMs > FRAME_MS ? '#b3261e' : '#1b5e20'}">longest stall ${esc(fmt(panel.longestMs))} ms</text>`);
    for (let g = 0; g <= gMax; g += yStep) {
      out.push(`<line x1="${M.left}" x2="${W - M.right}" y1="${y(g).toFixed(1)}" y2="${y(g).toFixed(1)}" stroke="#e6e6e6"/>`);
      out.push(`<text x="${M.left - 6}" y="${(y(g) + 4).toFixed(1)}" text-anchor="end" fill="#555">${fmt(g)}</text>`);
    }
    for (let t = Math.ceil(tMin / xStep) * xStep; t <= tMax; t += xStep) {
      out.push(`<line x1="${x(t).toFixed(1)}" x2="${x(t).toFixed(1)}" y1="${bottom}" y2="${bottom + 4}" stroke="#777"/>`);
      out.push(`<text x="${x(t).toFixed(1)}" y="${bottom + 17}" text-anchor="middle" fill="#555">${fmt(t)}</text>`);
    }
    out.push(`<line x1="${x(0).toFixed(1)}" x2="${x(0).toFixed(1)}" y1="${top}" y2="${bottom}" stroke="#999" stroke-dasharray="2 3"/>`);
    out.push(`<text x="${(x(0) + 4).toFixed(1)}" y="${top + 12}" fill="#777">loop starts</text>`);
    for (const [t, g] of panel.points) {
      if (g < MIN_DRAWN_MS) continue; // the ticker's own 1 ms period: the thread was free
      const x0 = x(t - g);
      const w = Math.max(1, x(t) - x0);
      const h = Math.max(1, bottom - y(g));
      out.push(`<rect x="${x0.toFixed(1)}" y="${(bottom - h).toFixed(1)}" width="${w.toFixed(1)}" height="${h.toFixed(1)}" fill="${g > FRAME_MS ? '#d93025' : '#4a7bd0'}" fill-opacity="0.85"><title>${fmt(g)} ms ending at ${fmt(t)} ms</title></rect>`);
    }
    out.push(`<line x1="${M.left}" x2="${W - M.right}" y1="${y(FRAME_MS).toFixed(1)}" y2="${y(FRAME_MS).toFixed(1)}" stroke="#222" stroke-dasharray="6 4"/>`);
    out.push(`<line x1="${M.left}" x2="${W - M.right}" y1="${bottom}" y2="${bottom}" stroke="#333"/>`);
    out.push(`<line x1="${M.left}" x2="${M.left}" y1="${top}" y2="${bottom}" stroke="#333"/>`);
    if (!panel.points.length) out.push(`<text x="${W / 2}" y="${top + PANEL_H / 2}" text-anchor="middle" fill="#b3261e">no sample</text>`);
  });
  const last = M.top + panels.length * PANEL_H + (panels.length - 1) * M.gap;
  out.push(`<text x="${M.left + plotW / 2}" y="${last + 38}" text-anchor="middle" fill="#333">time since the loop started (ms)</text>`);
  out.push(`<text transform="translate(18 ${M.top + (last - M.top) / 2}) rotate(-90)" text-anchor="middle" fill="#333">stall (ms)</text>`);
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

function fmt(v) {
  const a = Math.abs(v);
  return a >= 100 ? Math.round(v).toLocaleString('en-US') : a >= 10 ? v.toFixed(1).replace(/\.0$/, '') : v.toFixed(a === 0 ? 0 : 1).replace(/\.0$/, '');
}
