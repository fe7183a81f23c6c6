import { writeFileSync } from 'node:fs';
import { PNG } from 'pngjs';

/** A line chart drawn pixel by pixel with pngjs (no font library: a 3x5 bitmap font for labels). */
export interface Series {
  label: string;
  color: [number, number, number];
  /** y per x (x = index); NaN leaves a gap. */
  values: number[];
  dashed?: boolean;
}

const FONT: Record<string, string> = {
  '0': '111101101101111', '1': '010110010010111', '2': '111001111100111', '3': '111001111001111', '4': '101101111001001',
  '5': '111100111001111', '6': '111100111101111', '7': '111001001001001', '8': '111101111101111', '9': '111101111001111',
  A: '010101111101101', B: '110101110101110', C: '011100100100011', D: '110101101101110', E: '111100110100111',
  F: '111100110100100', G: '011100101101011', H: '101101111101101', I: '111010010010111', J: '001001001101010',
  K: '101101110101101', L: '100100100100111', M: '101111111101101', N: '110101101101101', O: '010101101101010',
  P: '110101110100100', Q: '010101101110011', R: '110101110101101', S: '011100010001110', T: '111010010010010',
  U: '101101101101111', V: '101101101101010', W: '101101111111101', X: '101101010101101', Y: '101101010010010',
  Z: '111001010100111', '.': '000000000000010', '-': '000000111000000', '/': '001001010100100', ':': '000010000010000',
  '(': '010100100100010', ')': '010001001001010', ' ': '000000000000000', '%': '101001010100101', '=': '000111000111000',
};

export function drawLineChart(path: string, title: string, xLabel: string, yLabel: string, series: Series[], width = 960, height = 540): void {
  const png = new PNG({ width, height });
  png.data.fill(255);
  const set = (x: number, y: number, [r, g, b]: [number, number, number]) => {
    x = Math.round(x);
    y = Math.round(y);
    if (x < 0 || y < 0 || x >= width || y >= height) return;
    const i = (y * width + x) * 4;
    png.data[i] = r;
    png.data[i + 1] = g;
    png.data[i + 2] = b;
    png.data[i + 3] = 255;
  };
  const text = (x: number, y: number, s: string, color: [number, number, number] = [0, 0, 0], scale = 2) => {
    for (const ch of s.toUpperCase()) {
      const glyph = FONT[ch] ?? FONT[' '];
      for (let row = 0; row < 5; row++) {
        for (let col = 0; col < 3; col++) {
          if (glyph[row * 3 + col] === '1') for (let dy = 0; dy < scale; dy++) for (let dx = 0; dx < scale; dx++) set(x + col * scale + dx, y + row * scale + dy, color);
        }
      }
      x += 4 * scale;
    }
  };
  const line = (x0: number, y0: number, x1: number, y1: number, color: [number, number, number], dashed = false, thick = 1) => {
    const steps = Math.max(1, Math.ceil(Math.max(Math.abs(x1 - x0), Math.abs(y1 - y0))));
    for (let i = 0; i <= steps; i++) {
      if (dashed && Math.floor(i / 6) % 2 === 1) continue;
      const x = x0 + ((x1 - x0) * i) / steps;
      const y = y0 + ((y1 - y0) * i) / steps;
      for (let t = 0; t < thick; t++) set(x, y + t, color);
    }
  };

  const left = 80, right = width - 20, top = 50, bottom = height - 60;
  const n = Math.max(1, ...series.map((s) => s.values.length));
  const finite = series.flatMap((s) => s.values.filter(Number.isFinite));
  const rawMax = Math.max(1, ...finite);
  const step = niceStep(rawMax / 5);
  const yMax = Math.ceil(rawMax / step) * step;
  const px = (i: number) => left + ((right - left) * i) / Math.max(1, n - 1);
  const py = (v: number) => bottom - ((bottom - top) * Math.min(v, yMax)) / yMax;

  text(left, 12, title, [0, 0, 0], 2);
  for (let v = 0; v <= yMax + 1e-9; v += step) {
    line(left, py(v), right, py(v), [225, 225, 225]);
    text(8, py(v) - 5, String(Math.round(v)), [60, 60, 60], 2);
  }
  const xStep = Math.max(1, Math.ceil(n / 10));
  for (let i = 0; i < n; i += xStep) {
    line(px(i), bottom, px(i), bottom + 5, [0, 0, 0]);
    text(px(i) - 4, bottom + 10, String(i), [60, 60, 60], 2);
  }
  line(left, top, left, bottom, [0, 0, 0]);
  line(left, bottom, right, bottom, [0, 0, 0]);
  text(left + (right - left) / 2 - xLabel.length * 4, height - 22, xLabel, [0, 0, 0], 2);
  text(8, top - 18, yLabel, [0, 0, 0], 2);

  series.forEach((s, k) => {
    let prev: [number, number] | undefined;
    s.values.forEach((v, i) => {
      if (!Number.isFinite(v)) {
        prev = undefined;
        return;
      }
      const p: [number, number] = [px(i), py(v)];
      if (prev) line(prev[0], prev[1], p[0], p[1], s.color, s.dashed, 2);
      else set(p[0], p[1], s.color);
      prev = p;
    });
    const lx = right - 260, ly = top + 8 + k * 16;
    line(lx, ly + 4, lx + 24, ly + 4, s.color, s.dashed, 2);
    text(lx + 32, ly, s.label, s.color, 2);
  });
  writeFileSync(path, PNG.sync.write(png));
}

function niceStep(raw: number): number {
  const mag = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5, 10]) if (raw <= m * mag) return m * mag;
  return 10 * mag;
}
