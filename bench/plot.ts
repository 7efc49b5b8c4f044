/**
 * Draws the scale rows as an SVG: time (cold index, bare parse) and memory (peak RSS, store size)
 * against files, both axes logarithmic, one panel each. Plain SVG, so the README can show it.
 */
import type { ScaleRow } from './scale';

interface Series {
  readonly label: string;
  readonly colour: string;
  readonly value: (row: ScaleRow) => number;
}

const WIDTH = 360;
const HEIGHT = 260;
const MARGIN = { left: 56, right: 30, top: 30, bottom: 40 };

export function scalePlot(rows: readonly ScaleRow[]): string {
  const sorted = [...rows].sort((a, b) => a.files - b.files);
  const time = panel(sorted, 'Seconds', [
    { label: 'cold index', colour: '#d62728', value: (row) => row.coldIndexSeconds },
    { label: 'bare parse', colour: '#1f77b4', value: (row) => row.parseSeconds },
  ]);
  const memory = panel(sorted, 'MB', [
    { label: 'peak RSS', colour: '#d62728', value: (row) => row.peakRssMb },
    { label: 'store', colour: '#2ca02c', value: (row) => row.storeMb },
  ]);
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH * 2}" height="${HEIGHT}" font-family="sans-serif" font-size="11">`,
    '<rect width="100%" height="100%" fill="white"/>',
    `<g>${time}</g>`,
    `<g transform="translate(${WIDTH},0)">${memory}</g>`,
    '</svg>',
    '',
  ].join('\n');
}

function panel(rows: readonly ScaleRow[], unit: string, series: readonly Series[]): string {
  const xs = rows.map((row) => row.files);
  const ys = rows.flatMap((row) => series.map((s) => s.value(row))).filter((v) => v > 0);
  if (!xs.length || !ys.length) return '';
  const x = logScale(Math.min(...xs), Math.max(...xs), MARGIN.left, WIDTH - MARGIN.right);
  const y = logScale(Math.min(...ys), Math.max(...ys), HEIGHT - MARGIN.bottom, MARGIN.top);
  const parts: string[] = [];
  parts.push(
    `<line x1="${MARGIN.left}" y1="${HEIGHT - MARGIN.bottom}" x2="${WIDTH - MARGIN.right}" y2="${HEIGHT - MARGIN.bottom}" stroke="#444"/>`,
    `<line x1="${MARGIN.left}" y1="${MARGIN.top}" x2="${MARGIN.left}" y2="${HEIGHT - MARGIN.bottom}" stroke="#444"/>`,
    `<text x="${(MARGIN.left + WIDTH - MARGIN.right) / 2}" y="${HEIGHT - 8}" text-anchor="middle">files (log)</text>`,
    `<text x="14" y="${MARGIN.top - 12}">${unit} (log)</text>`,
  );
  for (const files of xs)
    parts.push(
      `<text x="${x(files)}" y="${HEIGHT - MARGIN.bottom + 14}" text-anchor="middle">${files.toLocaleString('en')}</text>`,
    );
  for (const tick of logTicks(Math.min(...ys), Math.max(...ys)))
    parts.push(
      `<text x="${MARGIN.left - 6}" y="${y(tick) + 4}" text-anchor="end">${tick}</text>`,
      `<line x1="${MARGIN.left}" y1="${y(tick)}" x2="${WIDTH - MARGIN.right}" y2="${y(tick)}" stroke="#eee"/>`,
    );
  series.forEach((s, i) => {
    const points = rows
      .filter((row) => s.value(row) > 0)
      .map((row) => `${x(row.files).toFixed(1)},${y(s.value(row)).toFixed(1)}`);
    parts.push(
      `<polyline points="${points.join(' ')}" fill="none" stroke="${s.colour}" stroke-width="2"/>`,
      ...points.map((point) => {
        const [cx, cy] = point.split(',');
        return `<circle cx="${cx}" cy="${cy}" r="3" fill="${s.colour}"/>`;
      }),
      `<text x="${MARGIN.left + 60 + i * 110}" y="${MARGIN.top - 12}" fill="${s.colour}">— ${s.label}</text>`,
    );
  });
  return parts.join('\n');
}

/** Maps [low, high] logarithmically onto [from, to]; a single value sits in the middle. */
function logScale(low: number, high: number, from: number, to: number): (value: number) => number {
  const a = Math.log10(low);
  const b = Math.log10(high);
  return (value) =>
    b === a ? (from + to) / 2 : from + ((Math.log10(value) - a) / (b - a)) * (to - from);
}

/** Powers of ten (and their halves' neighbours 2 and 5) within [low, high]. */
function logTicks(low: number, high: number): number[] {
  const ticks: number[] = [];
  for (let power = Math.floor(Math.log10(low)); power <= Math.ceil(Math.log10(high)); power++)
    for (const step of [1, 2, 5]) {
      const tick = step * 10 ** power;
      if (tick >= low && tick <= high) ticks.push(Number(tick.toPrecision(3)));
    }
  return ticks;
}
