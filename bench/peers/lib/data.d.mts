// Types of the shared workload generators (data.mjs).
export function uniform(n: number, seed: number, scale?: number): Float32Array;
export function w1Input(N?: number): Float32Array;
export function w2Inputs(n?: number): { A: Float32Array; B: Float32Array; n: number };
export const W3_DIMS: { batch: number; din: number; h: number; dout: number };
export function w3Inputs(batch?: number): {
  X: Float32Array;
  Y: Float32Array;
  params: Record<string, Float32Array>;
  shapes: Record<string, number[]>;
  batch: number;
};
export const W3_PARAM_NAMES: string[];
export interface W4Inputs {
  T: number;
  N: number;
  x: Float32Array;
  tets: Int32Array;
  DmInv: Float32Array;
  vol: Float32Array;
  mu: number;
  lam: number;
  mesh: unknown;
}
export function w4Inputs(T?: number): W4Inputs;
export function w5Inputs(B?: number, T?: number): W4Inputs & { B: number; xb: Float32Array; muB: Float32Array };
