/** A 3×5 pixel font for plot tick labels: digits and the characters of numbers (. - + e). */
const GLYPHS: Readonly<Record<string, readonly string[]>> = {
  "0": ["111", "101", "101", "101", "111"],
  "1": ["010", "110", "010", "010", "111"],
  "2": ["111", "001", "111", "100", "111"],
  "3": ["111", "001", "111", "001", "111"],
  "4": ["101", "101", "111", "001", "001"],
  "5": ["111", "100", "111", "001", "111"],
  "6": ["111", "100", "111", "101", "111"],
  "7": ["111", "001", "001", "001", "001"],
  "8": ["111", "101", "111", "101", "111"],
  "9": ["111", "101", "111", "001", "111"],
  ".": ["000", "000", "000", "000", "010"],
  "-": ["000", "000", "111", "000", "000"],
  "+": ["000", "010", "111", "010", "000"],
  "e": ["010", "101", "111", "100", "011"],
  " ": ["000", "000", "000", "000", "000"],
};
export const GLYPH_WIDTH = 3;
export const GLYPH_HEIGHT = 5;

/** Width in pixels of `text` at `scale` (one blank column between glyphs). */
export const textWidth = (text: string, scale: number): number => Math.max(0, text.length * (GLYPH_WIDTH + 1) - 1) * scale;

/** Calls `plot(x, y)` for every lit pixel of `text` with its top-left corner at (x0, y0). Unknown characters are skipped. */
export function rasterizeText(text: string, x0: number, y0: number, scale: number, plot: (x: number, y: number) => void): void {
  [...text].forEach((ch, k) => {
    const g = GLYPHS[ch];
    if (!g) return;
    const gx = x0 + k * (GLYPH_WIDTH + 1) * scale;
    g.forEach((row, r) => [...row].forEach((bit, c) => {
      if (bit !== "1") return;
      for (let dy = 0; dy < scale; dy++) for (let dx = 0; dx < scale; dx++) plot(gx + c * scale + dx, y0 + r * scale + dy);
    }));
  });
}
