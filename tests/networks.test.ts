/**
 * gradsim.networks: the state predictor, parameter checkpoints (round trip, corrupt files), and
 * RISP's exact rendering-gradient regulariser — its value against an explicit Jacobian, its
 * parameter gradient against central differences (float64), and the invariance it buys.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { grad, init, jacfwd, jit, np, optim, random, tree, valueAndGrad, vmap, type Array } from "../src/index.js";
import { networks } from "../src/node.js";
import { centralDifference, directionLike, inner } from "./models-helpers.js";

await init({ backend: "cpu" });
const dir = mkdtempSync(join(tmpdir(), "gradsim-networks-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const tiny: networks.PredictorConfig = { image: [8, 8, 3], outputs: 2, widths: [4], groups: 2, dtype: "float64" };
const image = (seed: number) => random.uniform(random.key(seed), [8, 8, 3], { dtype: "float64" });
/** A 32×32 image of a Gaussian blob centred at row 16 and column `col`. */
const blob = (col: number) =>
  np.array(
    globalThis.Array.from({ length: 32 }, (_, r) =>
      globalThis.Array.from({ length: 32 }, (_, c) => {
        const v = Math.exp(-((r - 16) ** 2 + (c - col) ** 2) / 2);
        return [v, 0.5 * v, 0];
      }),
    ),
    { dtype: "float64" },
  );

describe("networks", () => {
  it("the predictor maps an image to a state, batches under vmap and jit, and names a wrong image shape", () => {
    const p = networks.initPredictor(random.key(0), tiny);
    const y = networks.predictor(p, tiny, image(1));
    expect(y.shape).toEqual([2]);
    const batch = np.stack([image(1), image(2)], 0);
    const ys = jit(vmap((im: Array) => networks.predictor(p, tiny, im)))(batch);
    expect(Math.max(...globalThis.Array.from(np.abs(np.sub(np.index(ys, 0), y)).dataSync()))).toBeLessThan(1e-12);
    expect(() => networks.predictor(p, tiny, random.uniform(random.key(3), [8, 8, 4], { dtype: "float64" }))).toThrow(
      /the image is \[8,8,4\], but this network was built for \[8,8,3\]/,
    );
    // The feature maps a perceptual loss compares: one per stage, halving the size; the head reads the last.
    const features = networks.predictorFeatures(p, tiny, image(1));
    expect(features.length).toBe(tiny.widths!.length);
    features.forEach((f, i) => expect(f.shape).toEqual([tiny.widths![i], 8 / 2 ** (i + 1), 8 / 2 ** (i + 1)]));
    expect(np.max(np.abs(np.sub(networks.linear(p.head, np.mean(features.at(-1)!, [1, 2])), y))).item()).toBeLessThan(
      1e-12,
    );
  });

  it("global average pooling cannot tell where a blob is; coordinate channels or a flattened head can", () => {
    const shift = (cfg: networks.PredictorConfig) => {
      const p = networks.initPredictor(random.key(2), cfg);
      return np.max(np.abs(np.sub(networks.predictor(p, cfg, blob(13)), networks.predictor(p, cfg, blob(19))))).item();
    };
    const base: networks.PredictorConfig = { image: [32, 32, 3], outputs: 2, widths: [4], groups: 2, dtype: "float64" };
    // The shift is a multiple of the stride: equivariant convolutions, then a mean.
    expect(shift(base)).toBeLessThan(1e-9);
    expect(shift({ ...base, coordinates: true })).toBeGreaterThan(1e-3);
    expect(shift({ ...base, head: "flatten" })).toBeGreaterThan(1e-3);
    expect(networks.initPredictor(random.key(2), { ...base, head: "flatten", widths: [4, 4] }).head.w.shape).toEqual([
      2,
      4 * 8 * 8,
    ]);
  });

  it("a keypoint head reads where each channel responds, between cells, smoothly", () => {
    const map = np.array(
      [
        [
          [0, 0, 0, 0],
          [0, 0, 0, 40],
          [0, 0, 0, 0],
          [0, 0, 0, 0],
        ], // a peak at row 1, column 3
        [
          [0, 40, 40, 0],
          [0, 0, 0, 0],
          [0, 0, 0, 0],
          [0, 0, 0, 0],
        ], // two equal peaks in row 0: between them
        [
          [1, 1, 1, 1],
          [1, 1, 1, 1],
          [1, 1, 1, 1],
          [1, 1, 1, 1],
        ], // flat: the centre
      ],
      { dtype: "float64" },
    );
    const k = globalThis.Array.from(networks.spatialSoftArgmax(map).dataSync());
    [1, -1 / 3, 0, -1, 0, 0].forEach((v, i) => expect(k[i]).toBeCloseTo(v, 9));
    expect(() => networks.spatialSoftArgmax(np.zeros([4, 4]))).toThrow(
      /feature map \[channels, height, width\], got \[4,4\]/,
    );
    // Its gradient against central differences (float64).
    const x = random.normal(random.key(5), [2, 3, 4], { dtype: "float64" }),
      w = random.normal(random.key(6), [4], { dtype: "float64" });
    const f = (m: Array) => np.sum(np.mul(w, networks.spatialSoftArgmax(m)));
    const g = grad(f)(x);
    for (const seed of [1, 2, 3]) {
      const d = directionLike(x, seed);
      expect(inner(g, d)).toBeCloseTo(centralDifference(f, x, d), 7);
    }
    // In a predictor: 2 numbers per channel reach the head, and a move of one pixel (half a cell) shows.
    const cfg: networks.PredictorConfig = {
      image: [32, 32, 3],
      outputs: 2,
      widths: [4],
      groups: 2,
      head: "keypoints",
      dtype: "float64",
    };
    const p = networks.initPredictor(random.key(2), cfg);
    expect(p.head.w.shape).toEqual([2, 2 * 4]);
    expect(
      np.max(np.abs(np.sub(networks.predictor(p, cfg, blob(13)), networks.predictor(p, cfg, blob(14))))).item(),
    ).toBeGreaterThan(1e-4);
  });

  it("checkpoints round-trip exactly and a corrupt or mismatched file is a clear error", async () => {
    const p = networks.initPredictor(random.key(0), tiny);
    const file = join(dir, "net.params");
    await networks.saveParams(file, p);
    const q = networks.loadParams(file, p);
    const [a] = tree.flatten(p),
      [b] = tree.flatten(q);
    a.forEach((x, i) =>
      expect(globalThis.Array.from((b[i] as Array).dataSync())).toEqual(globalThis.Array.from((x as Array).dataSync())),
    );
    expect(networks.predictor(q, tiny, image(1)).dataSync()).toEqual(networks.predictor(p, tiny, image(1)).dataSync());
    const bytes = readFileSync(file);
    const corrupt = (name: string, data: Uint8Array) => {
      const f = join(dir, name);
      writeFileSync(f, data);
      return f;
    };
    expect(() => networks.loadParams(corrupt("magic.params", Buffer.from("hello world, not params")))).toThrow(
      /not a gradsim parameter file/,
    );
    expect(() => networks.loadParams(corrupt("short.params", bytes.subarray(0, bytes.length - 5)))).toThrow(
      /truncated/,
    );
    const header = Buffer.from(bytes);
    header[20] = 0x7b;
    header[21] = 0x7b; // break the JSON
    expect(() => networks.loadParams(corrupt("header.params", header))).toThrow(/not JSON|malformed|corrupt/);
    const other = networks.initPredictor(random.key(0), { ...tiny, widths: [6] });
    expect(() => networks.loadParams(file, other)).toThrow(
      /parameter \d+ \(stages\.0\.down\.w\) is float64\[.*\] in the file/,
    );
    expect(() => networks.loadParams(join(dir, "missing.params"))).toThrow(/cannot read/);
  });

  // Each is named in the refusal.
  it("a checkpoint cannot reach Object.prototype; duplicate, overlapping or non-finite parameters are refused", () => {
    /** Checkpoint bytes with the given header leaves and float32 values. */
    const file = (leaves: { path: string; shape: number[] }[], values: number[], name: string) => {
      const header = Buffer.from(JSON.stringify({ leaves: leaves.map((l) => ({ ...l, dtype: "float32" })) }));
      const out = Buffer.alloc(16 + header.length + 4 * values.length);
      out.write("GSPARAMS", 0, "ascii");
      out.writeUInt32LE(1, 8);
      out.writeUInt32LE(header.length, 12);
      header.copy(out, 16);
      values.forEach((v, i) => out.writeFloatLE(v, 16 + header.length + 4 * i));
      const f = join(dir, name);
      writeFileSync(f, out);
      return f;
    };
    for (const path of ["__proto__.ground", "a.__proto__.b", "constructor.prototype.x", "prototype"]) {
      expect(() => networks.loadParams(file([{ path, shape: [] }], [1], "proto.gsp"))).toThrow(
        /segment "(__proto__|constructor|prototype)".*not written by saveParams/,
      );
    }
    expect(({} as Record<string, unknown>).ground).toBeUndefined();
    expect(() =>
      networks.loadParams(
        file(
          [
            { path: "a.b", shape: [] },
            { path: "a.b", shape: [] },
          ],
          [1, 2],
          "dup.gsp",
        ),
      ),
    ).toThrow(/a\.b appears twice/);
    expect(() =>
      networks.loadParams(
        file(
          [
            { path: "a", shape: [] },
            { path: "a.b", shape: [] },
          ],
          [1, 2],
          "over1.gsp",
        ),
      ),
    ).toThrow(/a\.b lies inside the parameter a/);
    expect(() =>
      networks.loadParams(
        file(
          [
            { path: "a.b", shape: [] },
            { path: "a", shape: [] },
          ],
          [1, 2],
          "over2.gsp",
        ),
      ),
    ).toThrow(/a\.b lies inside the parameter a/);
    expect(() => networks.loadParams(file([{ path: "a..b", shape: [] }], [1], "empty.gsp"))).toThrow(/empty segment/);
    expect(() => networks.loadParams(file([{ path: "w", shape: [3] }], [1, NaN, Infinity], "nan.gsp"))).toThrow(
      /parameter w holds 2 non-finite values.*diverged/,
    );
    // A good file's records have no prototype to pollute, and still read as trees.
    const ok = networks.loadParams<{ a: { b: Array } }>(file([{ path: "a.b", shape: [2] }], [1, 2], "ok.gsp"));
    expect(Object.getPrototypeOf(ok)).toBeNull();
    expect(globalThis.Array.from(ok.a.b.dataSync())).toEqual([1, 2]);
    // Loaded for a network of another configuration: refused naming the parameter's path.
    const p = networks.initPredictor(random.key(0), { ...tiny, dtype: "float32" });
    const f = join(dir, "cfg.gsp");
    return networks.saveParams(f, p).then(() => {
      expect(() =>
        networks.loadParams(f, networks.initPredictor(random.key(0), { ...tiny, dtype: "float32", outputs: 3 })),
      ).toThrow(/parameter \d+ \(head\.w\) is float32\[2,4\] in the file, float32\[3,4\] in the network/);
      expect(() =>
        networks.loadParams(f, networks.initPredictor(random.key(0), { ...tiny, dtype: "float32", widths: [4, 4] })),
      ).toThrow(/missing: stages\.1\./);
      // Record key order is not part of the tree: a network whose records list their keys in another order still
      // matches.
      expect(() => networks.loadParams(f, { head: p.head, stages: p.stages })).not.toThrow();
    });
  });

  // J is the network's Jacobian in the image.
  it("the rendering-gradient penalties: Eq. 10 is ‖J·∂I/∂ψ‖_F; Eq. 12 is ‖∂I/∂ψ·∇_I L_error‖", () => {
    const p = networks.initPredictor(random.key(4), tiny);
    const im = image(5),
      dI = random.normal(random.key(6), [3, 8, 8, 3], { dtype: "float64" });
    const net = (x: Array) => networks.predictor(p, tiny, x);
    const J = np.reshape(jacfwd(net)(im), [2, 8 * 8 * 3]);
    const brute = np.sum(np.square(np.matmul(J, np.transpose(np.reshape(dI, [3, -1])))));
    expect(networks.renderingGradientPenalty(net, im, dI, { squared: true }).item()).toBeCloseTo(brute.item(), 10);
    expect(networks.renderingGradientPenalty(net, im, dI).item()).toBeCloseTo(Math.sqrt(brute.item()), 10);
    // Eq. 12: the norm of the state error's derivatives along the columns, ‖∂I/∂ψ · ∇_I L_error‖.
    const state = np.array([0.3, -0.2], { dtype: "float64" });
    const gI = np.reshape(grad((x: Array) => networks.stateError(net(x), state))(im), [-1]);
    const eq12 = Math.sqrt(np.sum(np.square(np.matmul(np.reshape(dI, [3, -1]), gI))).item());
    expect(networks.errorGradientPenalty(net, im, state, dI).item()).toBeCloseTo(eq12, 10);
    expect(() => networks.renderingGradientPenalty(net, im, np.zeros([3, 8, 8, 4], { dtype: "float64" }))).toThrow(
      /must be \[P, 8,8,3\]/,
    );
  });

  it.each(["Eq. 10", "Eq. 12"])("the %s penalty's parameter gradient matches central differences (float64)", (eq) => {
    const p0 = networks.initPredictor(random.key(7), tiny);
    const im = image(8),
      dI = random.normal(random.key(9), [2, 8, 8, 3], { dtype: "float64" }),
      state = np.array([0.3, -0.2], { dtype: "float64" });
    // Eq. 12 differentiates a reverse pass (∇_I L_error) once more: reverse over reverse.
    const penalty = (p: networks.PredictorParams) =>
      eq === "Eq. 10"
        ? networks.renderingGradientPenalty((x) => networks.predictor(p, tiny, x), im, dI)
        : networks.errorGradientPenalty((x) => networks.predictor(p, tiny, x), im, state, dI);
    const g = grad(penalty)(p0);
    const dir_ = tree.map((x: Array) => random.normal(random.key(x.size), x.shape, { dtype: "float64" }), p0);
    const dot = tree
      .flatten(tree.map((a: Array, b: Array) => np.sum(np.mul(a, b)), g, dir_))[0]
      .reduce((s: number, x) => s + (x as Array).item(), 0);
    const h = 1e-5;
    const at = (t: number) => penalty(tree.map((a: Array, b: Array) => np.add(a, np.mul(t, b)), p0, dir_)).item();
    const fd = (at(h) - at(-h)) / (2 * h);
    expect(Math.abs(dot - fd)).toBeLessThan(1e-6 * Math.max(1, Math.abs(fd)));
  });

  it("a penalty-trained predictor is less sensitive to a rendering parameter not determined by the state", async () => {
    // Images of a state s under a rendering parameter ψ: I = s·A + ψ·B + C (B overlaps A, so a
    // network can pick up ψ), from 6 training pairs. ∂I/∂ψ = B for every image.
    const A = random.uniform(random.key(10), [8, 8, 3], { dtype: "float64" });
    const B = np.mul(0.5, np.add(A, random.uniform(random.key(11), [8, 8, 3], { dtype: "float64" })));
    const C = random.uniform(random.key(12), [8, 8, 3], { dtype: "float64" });
    const cfg: networks.PredictorConfig = { ...tiny, outputs: 1 };
    const samples = [
      [0.2, 0.1],
      [0.5, 0.9],
      [0.8, 0.4],
      [0.3, 0.7],
      [0.9, 0.2],
      [0.6, 0.6],
    ];
    const img = (s: number, psi: number) => np.add(np.add(np.mul(s, A), np.mul(psi, B)), C);
    const images = np.stack(
        samples.map(([s, psi]) => img(s!, psi!)),
        0,
      ),
      states = np.array(
        samples.map(([s]) => [s!]),
        { dtype: "float64" },
      );
    const dI = np.expandDims(B, 0);
    const train = (weight: number) => {
      const loss = (p: networks.PredictorParams) => {
        const pred = vmap((x: Array) => networks.predictor(p, cfg, x))(images);
        const reg = np.mean(
          vmap((x: Array) =>
            networks.renderingGradientPenalty((y) => networks.predictor(p, cfg, y), x, dI, { squared: true }),
          )(images),
        );
        return np.add(networks.stateError(pred, states), np.mul(weight, reg));
      };
      const step = jit(valueAndGrad(loss));
      const opt = optim.adam(3e-3);
      let p = networks.initPredictor(random.key(13), cfg),
        s = opt.init(p);
      for (let k = 0; k < 300; k++) {
        const [, g] = step(p);
        const [u, n] = opt.update(g, s, p);
        s = n;
        p = optim.applyUpdates(p, u);
      }
      // Sensitivity to ψ at the training images (the penalty is its square: ~1e-3 untrained, hence the weight), and the
      // state error.
      const sens = vmap((x: Array) =>
        np.abs(np.sum(np.mul(grad((y: Array) => np.sum(networks.predictor(p, cfg, y)))(x), B))),
      )(images);
      const err = networks.stateError(vmap((x: Array) => networks.predictor(p, cfg, x))(images), states);
      return { sensitivity: np.mean(sens).item(), error: err.item() };
    };
    const plain = train(0),
      regularised = train(20);
    console.log(
      `sensitivity to ψ: ${plain.sensitivity.toExponential(2)} without the penalty, ` +
        `${regularised.sensitivity.toExponential(2)} with it; ` +
        `state error ${plain.error.toFixed(3)} / ${regularised.error.toFixed(3)}`,
    );
    expect(regularised.sensitivity).toBeLessThan(0.5 * plain.sensitivity);
    expect(regularised.error).toBeLessThan(0.1); // it still predicts the state (states span [0.2, 0.9])
  }, 120_000);

  it("trains in shuffled minibatches with a checkpoint and loss curves per epoch, and rejects bad data", async () => {
    const cfg: networks.PredictorConfig = { ...tiny, outputs: 1 };
    const N = 12;
    const A = random.uniform(random.key(20), [8, 8, 3], { dtype: "float64" });
    const states = np.reshape(np.linspace(0, 1, N, { dtype: "float64" }), [N, 1]);
    const images = vmap((s: Array) => np.mul(np.index(s, 0), A))(states);
    const loss = (p: networks.PredictorParams, b: { images: Array; states: Array }) =>
      networks.stateError(vmap((x: Array) => networks.predictor(p, cfg, x))(b.images), b.states);
    const out = join(dir, "training");
    const r = await networks.trainToDisk(out, {
      params: networks.initPredictor(random.key(21), cfg),
      loss,
      data: { images, states },
      batchSize: 4,
      epochs: 15,
      optimizer: optim.adam(3e-3),
      progress: false,
    });
    expect(r.losses.length).toBe(15 * 3);
    expect(r.epochLosses[14]!).toBeLessThan(0.5 * r.epochLosses[0]!);
    const saved = networks.loadParams(join(out, "params.gsp"), r.params);
    expect(networks.predictor(saved, cfg, np.index(images, 3)).item()).toBe(
      networks.predictor(r.params, cfg, np.index(images, 3)).item(),
    );
    expect(readFileSync(join(out, "loss.csv"), "utf8").trim().split("\n").length).toBe(1 + 45);
    expect(readFileSync(join(out, "loss.png")).subarray(1, 4).toString()).toBe("PNG");
    const base = { params: r.params, loss, optimizer: optim.adam(1e-3), epochs: 1, progress: false as const };
    await expect(networks.train({ ...base, data: { images, states }, batchSize: 13 })).rejects.toThrow(
      /batchSize must be an integer in \[1, 12\]/,
    );
    await expect(
      networks.train({ ...base, data: { images, states: np.zeros([5, 1], { dtype: "float64" }) }, batchSize: 4 }),
    ).rejects.toThrow(/same number of examples/);
    // The loss sees the fraction of training done (for weight ramps): 0, 1/6, …, 5/6 over 2 epochs of 3 batches.
    const ramp = await networks.train({
      ...base,
      epochs: 2,
      batchSize: 4,
      data: { images, states },
      loss: (p: networks.PredictorParams, _b: unknown, progress: Array) =>
        np.add(progress, np.mul(0, np.sum(p.head.b))),
    });
    ramp.losses.forEach((l, k) => expect(l).toBeCloseTo(k / 6, 12));
  }, 120_000);
});
