/**
 * A 5×7 pixel font (the classic column-encoded one, ASCII 32–126 plus μ λ σ γ ψ θ ² ³ × ± · − … →)
 * for plot titles, axis labels, legends and frame-strip labels. No dependencies, so it works
 * wherever the PNG writers do.
 */

/** Five columns per glyph, one byte each (bit 0 = top row), first column in the highest byte. */
const GLYPHS = new Map<string, number>([
  [" ", 0x0000000000],
  ["!", 0x00005f0000],
  ['"', 0x0007000700],
  ["#", 0x147f147f14],
  ["$", 0x242a7f2a12],
  ["%", 0x2313086462],
  ["&", 0x3649552250],
  ["'", 0x0005030000],
  ["(", 0x001c224100],
  [")", 0x0041221c00],
  ["*", 0x082a1c2a08],
  ["+", 0x08083e0808],
  [",", 0x0050300000],
  ["-", 0x0808080808],
  [".", 0x0060600000],
  ["/", 0x2010080402],
  ["0", 0x3e5149453e],
  ["1", 0x00427f4000],
  ["2", 0x4261514946],
  ["3", 0x2141454b31],
  ["4", 0x1814127f10],
  ["5", 0x2745454539],
  ["6", 0x3c4a494930],
  ["7", 0x0171090503],
  ["8", 0x3649494936],
  ["9", 0x064949291e],
  [":", 0x0036360000],
  [";", 0x0056360000],
  ["<", 0x0814224100],
  ["=", 0x1414141414],
  [">", 0x0041221408],
  ["?", 0x0201510906],
  ["@", 0x324979413e],
  ["A", 0x7e1111117e],
  ["B", 0x7f49494936],
  ["C", 0x3e41414122],
  ["D", 0x7f4141221c],
  ["E", 0x7f49494941],
  ["F", 0x7f09090101],
  ["G", 0x3e41415132],
  ["H", 0x7f0808087f],
  ["I", 0x00417f4100],
  ["J", 0x2040413f01],
  ["K", 0x7f08142241],
  ["L", 0x7f40404040],
  ["M", 0x7f0204027f],
  ["N", 0x7f0408107f],
  ["O", 0x3e4141413e],
  ["P", 0x7f09090906],
  ["Q", 0x3e4151215e],
  ["R", 0x7f09192946],
  ["S", 0x4649494931],
  ["T", 0x01017f0101],
  ["U", 0x3f4040403f],
  ["V", 0x1f2040201f],
  ["W", 0x7f2018207f],
  ["X", 0x6314081463],
  ["Y", 0x0304780403],
  ["Z", 0x6151494543],
  ["[", 0x00007f4141],
  ["\\", 0x0204081020],
  ["]", 0x41417f0000],
  ["^", 0x0402010204],
  ["_", 0x4040404040],
  ["`", 0x0001020400],
  ["a", 0x2054545478],
  ["b", 0x7f48444438],
  ["c", 0x3844444420],
  ["d", 0x384444487f],
  ["e", 0x3854545418],
  ["f", 0x087e090102],
  ["g", 0x081454543c],
  ["h", 0x7f08040478],
  ["i", 0x00447d4000],
  ["j", 0x2040443d00],
  ["k", 0x007f102844],
  ["l", 0x00417f4000],
  ["m", 0x7c04180478],
  ["n", 0x7c08040478],
  ["o", 0x3844444438],
  ["p", 0x7c14141408],
  ["q", 0x081414187c],
  ["r", 0x7c08040408],
  ["s", 0x4854545420],
  ["t", 0x043f444020],
  ["u", 0x3c4040207c],
  ["v", 0x1c2040201c],
  ["w", 0x3c4030403c],
  ["x", 0x4428102844],
  ["y", 0x0c5050503c],
  ["z", 0x4464544c44],
  ["{", 0x0008364100],
  ["|", 0x00007f0000],
  ["}", 0x0041360800],
  ["~", 0x0804081008],
  ["\u03bc", 0x7c2040201c],
  ["\u03bb", 0x40300e3040],
  ["\u00b2", 0x00090d0a00],
  ["\u00d7", 0x2214081422],
  ["\u00b1", 0x44445f4444],
  ["\u00b7", 0x0000080000],
  ["\u03c3", 0x3844444c34],
  ["\u03b3", 0x0c3040300c],
  ["\u03c8", 0x0c107f100c],
  ["\u03b8", 0x3e4949493e],
  ["\u2212", 0x0808080808],
  ["\u00b3", 0x0011150a00],
  ["\u2026", 0x4000400040],
  ["\u2192", 0x08082a1c08],
]);

export const GLYPH_WIDTH = 5;
export const GLYPH_HEIGHT = 7;
/** Horizontal advance per character in font pixels (one blank column between glyphs). */
const ADVANCE = GLYPH_WIDTH + 1;

/** Width in pixels of `text` at `scale`. */
export const textWidth = (text: string, scale: number): number => Math.max(0, [...text].length * ADVANCE - 1) * scale;

/** Characters the font cannot draw are shown as "?" (so a label never silently loses a letter). */
const glyphOf = (ch: string): number => GLYPHS.get(ch) ?? GLYPHS.get("?")!;

/** Calls `plot(x, y)` for every lit pixel of `text` with its top-left corner at (x0, y0). */
export function rasterizeText(
  text: string,
  x0: number,
  y0: number,
  scale: number,
  plot: (x: number, y: number) => void,
): void {
  [...text].forEach((ch, k) => {
    const bits = glyphOf(ch);
    const gx = x0 + k * ADVANCE * scale;
    for (let c = 0; c < GLYPH_WIDTH; c++) {
      const column = Math.floor(bits / 256 ** (GLYPH_WIDTH - 1 - c)) % 256;
      for (let r = 0; r < GLYPH_HEIGHT; r++) {
        if (!((column >> r) & 1)) continue;
        for (let dy = 0; dy < scale; dy++)
          for (let dx = 0; dx < scale; dx++) plot(gx + c * scale + dx, y0 + r * scale + dy);
      }
    }
  });
}

/**
 * Like `rasterizeText`, rotated 90° counter-clockwise (reading bottom to top), for y-axis titles:
 * (x0, y0) is the top-left corner of the rotated text's bounding box.
 */
export function rasterizeTextVertical(
  text: string,
  x0: number,
  y0: number,
  scale: number,
  plot: (x: number, y: number) => void,
): void {
  const length = textWidth(text, scale);
  rasterizeText(text, 0, 0, scale, (x, y) => plot(x0 + y, y0 + length - 1 - x));
}
