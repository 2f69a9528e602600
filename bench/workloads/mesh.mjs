// Copied from ../shared/bench/peers/lib (the shared workload definitions), so checksums match the peers.
// Deterministic tetrahedral box mesh for the FEM workloads (W4/W5).
//
// A box of nx*ny*nz unit cubes (edge h) is split into 5 tetrahedra per cube.
// The 5-tet split alternates with cube parity (i+j+k) so face diagonals of
// neighbouring cubes match (conforming mesh). Corner numbering inside a cube:
// c = a + 2b + 4c for the corner at (i+a, j+b, k+c).
//   even parity: corner tets {0,1,2,4},{3,2,1,7},{5,1,4,7},{6,4,2,7}; centre {1,2,4,7}
//   odd parity : corner tets {1,0,3,5},{2,3,0,6},{4,0,5,6},{7,3,6,5}; centre {0,3,5,6}
// Each tet is re-oriented (swap of its last two vertices) so det(Dm) > 0.
//
// Rest positions X (float64 on host), deformed positions x = phi(X) (a smooth
// stretch + twist + ripple, J > 0 everywhere), per-tet DmInv (3x3, row-major,
// Dm columns = X1-X0, X2-X0, X3-X0) and rest volume vol = det(Dm)/6.
//
// Usage as a script:  node lib/mesh.mjs --tets 10000 [--out mesh.json]

import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Cube counts used for the fixed workload sizes (T = 5 * nx * ny * nz). */
export const MESH_DIMS = {
  1000: [10, 5, 4],
  10000: [20, 10, 10],
  100000: [40, 25, 20],
};

/** Material constants (stable Neo-Hookean, Smith et al. 2018 form given in the brief). */
export const MU = 100.0;
export const LAM = 400.0; // alpha = 1 + MU/LAM = 1.25

const EVEN = [[0, 1, 2, 4], [3, 2, 1, 7], [5, 1, 4, 7], [6, 4, 2, 7], [1, 2, 4, 7]];
const ODD = [[1, 0, 3, 5], [2, 3, 0, 6], [4, 0, 5, 6], [7, 3, 6, 5], [0, 3, 5, 6]];

/** Deformation map phi(X) with amplitude `s` (s=1 for W4; W5 scales it per batch item). */
export function deform(X, Y, Z, s = 1) {
  const th = 0.3 * s * Z;               // twist about z
  const px = X * (1 + 0.05 * s) + 0.01 * s * Math.sin(3 * Y + 2 * Z);
  const py = Y * (1 - 0.03 * s) + 0.01 * s * Math.sin(2 * X + 3 * Z);
  const pz = Z * (1 + 0.02 * s) + 0.01 * s * Math.sin(2 * X + 2 * Y);
  const c = Math.cos(th), sn = Math.sin(th);
  return [c * px - sn * py, sn * px + c * py, pz];
}

export function boxTetMesh(nx, ny, nz, h = 1 / Math.max(nx, ny, nz)) {
  const vid = (i, j, k) => i + (nx + 1) * (j + (ny + 1) * k);
  const N = (nx + 1) * (ny + 1) * (nz + 1);
  const X = new Float64Array(N * 3);
  for (let k = 0; k <= nz; k++) for (let j = 0; j <= ny; j++) for (let i = 0; i <= nx; i++) {
    const v = vid(i, j, k);
    X[3 * v] = i * h; X[3 * v + 1] = j * h; X[3 * v + 2] = k * h;
  }
  const T = 5 * nx * ny * nz;
  const tets = new Int32Array(T * 4);
  let t = 0;
  for (let k = 0; k < nz; k++) for (let j = 0; j < ny; j++) for (let i = 0; i < nx; i++) {
    const corner = (c) => vid(i + (c & 1), j + ((c >> 1) & 1), k + ((c >> 2) & 1));
    for (const tet of ((i + j + k) % 2 === 0 ? EVEN : ODD)) {
      let v = tet.map(corner);
      if (det3(edgeMatrix(X, v)) < 0) v = [v[0], v[1], v[3], v[2]];
      tets.set(v, 4 * t++);
    }
  }
  const DmInv = new Float64Array(T * 9);
  const vol = new Float64Array(T);
  for (let t = 0; t < T; t++) {
    const v = tets.subarray(4 * t, 4 * t + 4);
    const Dm = edgeMatrix(X, v);
    const d = det3(Dm);
    if (!(d > 0)) throw new Error(`degenerate tet ${t}`);
    vol[t] = d / 6;
    DmInv.set(inv3(Dm, d), 9 * t);
  }
  return { nx, ny, nz, h, N, T, X, tets, DmInv, vol };
}

/** Deformed positions (float64) for amplitude s. */
export function deformedPositions(mesh, s = 1) {
  const x = new Float64Array(mesh.N * 3);
  for (let v = 0; v < mesh.N; v++) {
    const p = deform(mesh.X[3 * v], mesh.X[3 * v + 1], mesh.X[3 * v + 2], s);
    x[3 * v] = p[0]; x[3 * v + 1] = p[1]; x[3 * v + 2] = p[2];
  }
  return x;
}

/** Mesh for one of the fixed sizes T in MESH_DIMS. */
export function meshForTets(T) {
  const d = MESH_DIMS[T];
  if (!d) throw new Error(`no mesh dims for T=${T}; known: ${Object.keys(MESH_DIMS)}`);
  return boxTetMesh(...d);
}

/** W5 batch: B deformed copies (amplitude 0.5..1.5) and per-item mu. */
export function batchInputs(mesh, B = 64) {
  const xb = new Float64Array(B * mesh.N * 3);
  const mu = new Float64Array(B);
  for (let b = 0; b < B; b++) {
    xb.set(deformedPositions(mesh, 0.5 + b / (B - 1)), b * mesh.N * 3);
    mu[b] = MU * (1 + b / B);
  }
  return { xb, mu };
}

// Row-major 3x3 with columns X1-X0, X2-X0, X3-X0.
function edgeMatrix(X, v) {
  const m = new Float64Array(9);
  for (let c = 0; c < 3; c++) for (let r = 0; r < 3; r++) m[3 * r + c] = X[3 * v[c + 1] + r] - X[3 * v[0] + r];
  return m;
}
export function det3(m) {
  return m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) + m[2] * (m[3] * m[7] - m[4] * m[6]);
}
function inv3(m, d) {
  const r = new Float64Array(9);
  r[0] = (m[4] * m[8] - m[5] * m[7]) / d; r[1] = (m[2] * m[7] - m[1] * m[8]) / d; r[2] = (m[1] * m[5] - m[2] * m[4]) / d;
  r[3] = (m[5] * m[6] - m[3] * m[8]) / d; r[4] = (m[0] * m[8] - m[2] * m[6]) / d; r[5] = (m[2] * m[3] - m[0] * m[5]) / d;
  r[6] = (m[3] * m[7] - m[4] * m[6]) / d; r[7] = (m[1] * m[6] - m[0] * m[7]) / d; r[8] = (m[0] * m[4] - m[1] * m[3]) / d;
  return r;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const i = process.argv.indexOf('--tets');
  const T = i > 0 ? Number(process.argv[i + 1]) : 10000;
  const mesh = meshForTets(T);
  const x = deformedPositions(mesh);
  let vsum = 0; for (const v of mesh.vol) vsum += v;
  const summary = { T: mesh.T, N: mesh.N, dims: [mesh.nx, mesh.ny, mesh.nz], h: mesh.h, total_volume: vsum,
    tets_first: Array.from(mesh.tets.subarray(0, 8)), x_first: Array.from(x.subarray(0, 6)) };
  const o = process.argv.indexOf('--out');
  if (o > 0) {
    fs.writeFileSync(process.argv[o + 1], JSON.stringify({ ...summary, X: Array.from(mesh.X), x: Array.from(x),
      tets: Array.from(mesh.tets), DmInv: Array.from(mesh.DmInv), vol: Array.from(mesh.vol), mu: MU, lam: LAM }));
  }
  console.log(JSON.stringify(summary));
}
