/**
 * A small convolutional LSTM video regressor (Shi et al. 2015), gradSim's "ConvLSTM" baseline
 * (Xu et al. 2019b) for Tables 1–2: each frame goes through a strided convolution, a ConvLSTM
 * cell carries hidden and cell maps over the frames (lax.scan), and a linear head reads the last
 * hidden map, flattened (where the object is matters). Pure functions on a parameter pytree.
 */
import type { Array } from "../core/array.js";
import type { DType } from "../core/dtype.js";
import * as nn from "../core/nn.js";
import { np } from "../core/np/index.js";
import * as random from "../core/random.js";
import { lax } from "../transforms/index.js";
import { conv, initConv, initLinear, linear, type ConvParams, type LinearParams } from "./layers.js";

export interface ConvLstmConfig {
  /** One frame [height, width, channels]. */
  readonly frame: readonly [number, number, number];
  readonly outputs: number;
  /** Channels of the per-frame convolution (default 8) and of the hidden state (default 8). */
  readonly features?: number;
  readonly hidden?: number;
  readonly dtype?: DType;
}

export interface ConvLstmParams {
  readonly encode: ConvParams;
  /** The four gates (input, forget, output, candidate) from [features + hidden] channels. */
  readonly gates: ConvParams;
  readonly head: LinearParams;
}

export function initConvLstm(key: Array, c: ConvLstmConfig): ConvLstmParams {
  const F = c.features ?? 8,
    Hd = c.hidden ?? 8,
    dtype = c.dtype ?? "float32";
  const [h, w] = [Math.ceil(c.frame[0] / 2), Math.ceil(c.frame[1] / 2)];
  const keys = random.split(key, 3);
  const gates = initConv(np.index(keys, 1), F + Hd, 4 * Hd, 3, dtype);
  // Forget-gate bias 1: the cell remembers from the start (Jozefowicz et al. 2015).
  const bias = np.array(
    globalThis.Array.from({ length: 4 * Hd }, (_, k) => (k >= Hd && k < 2 * Hd ? 1 : 0)),
    { dtype },
  );
  return {
    encode: initConv(np.index(keys, 0), c.frame[2], F, 3, dtype),
    gates: { w: np.mul(gates.w, 0.5), b: bias },
    head: initLinear(np.index(keys, 2), Hd * h * w, c.outputs, dtype),
  };
}

/** The regressor on a video [T, H, W, C] → [outputs]. */
export function convLstm(p: ConvLstmParams, c: ConvLstmConfig, video: Array): Array {
  if (video.ndim !== 4 || video.shape.slice(1).join() !== c.frame.join()) {
    throw new Error(
      `convLstm: the video is [${video.shape}], but this network ` +
        `was built for frames [${c.frame}]: give [frames, ${c.frame}].`,
    );
  }
  const Hd = c.hidden ?? 8;
  const [h, w] = [Math.ceil(c.frame[0] / 2), Math.ceil(c.frame[1] / 2)];
  const zeros = np.zeros([Hd, h, w], { dtype: video.dtype });
  const cell = ([hPrev, cPrev]: [Array, Array], frame: Array): [[Array, Array], null] => {
    const x = nn.swish(conv(p.encode, np.transpose(frame, [2, 0, 1]), 2));
    const [i, f, o, g] = np.split(conv(p.gates, np.concatenate([x, hPrev], 0)), 4, 0) as [Array, Array, Array, Array];
    const cNext = np.add(np.mul(nn.sigmoid(f), cPrev), np.mul(nn.sigmoid(i), np.tanh(g)));
    return [[np.mul(nn.sigmoid(o), np.tanh(cNext)), cNext], null];
  };
  const [[hLast]] = lax.scan(cell, [zeros, zeros] as [Array, Array], video);
  return linear(p.head, np.reshape(hLast, [-1]));
}
