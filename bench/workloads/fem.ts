/** W4/W5: stable Neo-Hookean energy Σ vol·ψ(F) over a tet mesh, written with the gradsim array API. */
import { np, type Array } from "gradsim";

/**
 * Energy from vertex positions x [N,3] (tets [T,4] int32, DmInv [T,3,3], vol [T]); mu may be an Array (W5) or a number.
 */
export function femEnergy(x: Array, tets: Array, DmInv: Array, vol: Array, mu: Array | number, lam: number): Array {
  const T = tets.shape[0]!;
  const xs = np.take(x, np.reshape(tets, [-1]), 0).reshape([T, 4, 3]);
  const [x0, rest] = np.split(xs, [1], 1) as [Array, Array]; // [T,1,3], [T,3,3]
  const Ds = np.transpose(np.sub(rest, x0), [0, 2, 1]); // columns x_k - x_0
  const F = np.matmul(Ds, DmInv); // [T,3,3]
  const Ic = np.sum(np.square(F), [1, 2]);
  const f = np.split(np.reshape(F, [T, 9]), 9, 1).map((c) => np.reshape(c, [T]));
  const J = np.add(
    np.sub(
      np.mul(f[0]!, np.sub(np.mul(f[4]!, f[8]!), np.mul(f[5]!, f[7]!))),
      np.mul(f[1]!, np.sub(np.mul(f[3]!, f[8]!), np.mul(f[5]!, f[6]!))),
    ),
    np.mul(f[2]!, np.sub(np.mul(f[3]!, f[7]!), np.mul(f[4]!, f[6]!))),
  );
  const alpha = np.add(np.div(mu, lam), 1);
  const halfMu = np.mul(mu, 0.5);
  const psi = np.sub(
    np.add(np.mul(np.sub(Ic, 3), halfMu), np.mul(np.square(np.sub(J, alpha)), 0.5 * lam)),
    np.mul(np.log(np.add(Ic, 1)), halfMu),
  );
  return np.sum(np.mul(vol, psi));
}
