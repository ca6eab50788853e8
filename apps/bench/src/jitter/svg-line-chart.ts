/** One line of a chart. */
export interface Series {
  readonly name: string;
  readonly points: readonly (readonly [number, number])[];
}

/** One panel: its title, axis labels and lines. */
export interface Panel {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly series: readonly Series[];
}

const COLORS = ['#d62728', '#7f7f7f', '#ff7f0e', '#1f77b4', '#2ca02c', '#9467bd'];
const WIDTH = 460;
const HEIGHT = 320;
const MARGIN = { left: 70, right: 20, top: 36, bottom: 48 };

const escapeXml = (text: string) => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

/** Powers of ten (and 2× and 5× when the range is narrow) between `low` and `high`. */
function logTicks(low: number, high: number): number[] {
  const ticks: number[] = [];
  const fine = Math.log10(high / low) < 2;
  for (let decade = 10 ** Math.floor(Math.log10(low)); decade <= high; decade *= 10) {
    for (const step of fine ? [1, 2, 5] : [1]) {
      const tick = decade * step;
      if (tick >= low && tick <= high) ticks.push(tick);
    }
  }
  return ticks;
}

function panelSvg(panel: Panel, offsetX: number): string {
  const xs = panel.series.flatMap((s) => s.points.map((p) => p[0]));
  const ys = panel.series.flatMap((s) => s.points.map((p) => p[1])).filter((y) => y > 0);
  const [xMin, xMax] = [Math.min(...xs), Math.max(...xs)];
  const yMin = 10 ** Math.floor(Math.log10(Math.min(...ys)));
  const yMax = 10 ** Math.ceil(Math.log10(Math.max(...ys)));
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const x = (v: number) => offsetX + MARGIN.left + ((v - xMin) / (xMax - xMin || 1)) * plotW;
  const y = (v: number) => MARGIN.top + plotH - ((Math.log10(v) - Math.log10(yMin)) / (Math.log10(yMax) - Math.log10(yMin))) * plotH;
  const parts: string[] = [];
  parts.push(`<text x="${offsetX + WIDTH / 2}" y="20" text-anchor="middle" font-weight="bold">${escapeXml(panel.title)}</text>`);
  parts.push(
    `<rect x="${offsetX + MARGIN.left}" y="${MARGIN.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#999"/>`,
  );
  for (const tick of logTicks(yMin, yMax)) {
    parts.push(
      `<line x1="${offsetX + MARGIN.left}" x2="${offsetX + MARGIN.left + plotW}" y1="${y(tick)}" y2="${y(tick)}" stroke="#eee"/>`,
      `<text x="${offsetX + MARGIN.left - 6}" y="${y(tick) + 4}" text-anchor="end" font-size="11">${tick.toLocaleString('en-US')}</text>`,
    );
  }
  for (const tick of [...new Set(xs)].sort((a, b) => a - b)) {
    parts.push(`<text x="${x(tick)}" y="${MARGIN.top + plotH + 16}" text-anchor="middle" font-size="11">${tick}</text>`);
  }
  parts.push(
    `<text x="${offsetX + MARGIN.left + plotW / 2}" y="${HEIGHT - 10}" text-anchor="middle" font-size="12">${escapeXml(panel.xLabel)}</text>`,
    `<text transform="translate(${offsetX + 16} ${MARGIN.top + plotH / 2}) rotate(-90)" text-anchor="middle" font-size="12">${escapeXml(panel.yLabel)} (log scale)</text>`,
  );
  panel.series.forEach((series, i) => {
    const color = COLORS[i % COLORS.length];
    const points = series.points.filter((p) => p[1] > 0).map(([px, py]) => `${x(px).toFixed(1)},${y(py).toFixed(1)}`);
    parts.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${points.join(' ')}"/>`);
    parts.push(
      `<rect x="${offsetX + MARGIN.left + 8}" y="${MARGIN.top + 8 + i * 16}" width="12" height="3" fill="${color}"/>`,
      `<text x="${offsetX + MARGIN.left + 24}" y="${MARGIN.top + 13 + i * 16}" font-size="11">${escapeXml(series.name)}</text>`,
    );
  });
  return parts.join('\n');
}

/** Renders panels side by side as one standalone SVG document. */
export function svgLineCharts(panels: readonly Panel[]): string {
  const width = WIDTH * panels.length;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${HEIGHT}" viewBox="0 0 ${width} ${HEIGHT}" font-family="sans-serif">`,
    `<rect width="${width}" height="${HEIGHT}" fill="white"/>`,
    ...panels.map((panel, i) => panelSvg(panel, i * WIDTH)),
    '</svg>',
    '',
  ].join('\n');
}
