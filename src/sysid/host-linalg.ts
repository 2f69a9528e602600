/** Small dense linear algebra on host numbers (the preconditioner's and the Gauss–Newton matrices). */

/**
 * Inverse of a small square matrix (Gauss–Jordan with partial pivoting), or null when it is singular (a pivot below
 * 1e-12 of the largest diagonal entry).
 */
export function invertHost(a: readonly (readonly number[])[]): number[][] | null {
  const n = a.length,
    m = a.map((row, i) => [...row, ...globalThis.Array.from({ length: n }, (_, j) => (i === j ? 1 : 0))]);
  const scale = Math.max(...a.map((row, i) => Math.abs(row[i]!)), 1e-300);
  for (let c = 0; c < n; c++) {
    let piv = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(m[r]![c]!) > Math.abs(m[piv]![c]!)) piv = r;
    if (!(Math.abs(m[piv]![c]!) > 1e-12 * scale)) return null;
    [m[c], m[piv]] = [m[piv]!, m[c]!];
    const d = m[c]![c]!;
    for (let j = 0; j < 2 * n; j++) m[c]![j]! /= d;
    for (let r = 0; r < n; r++) {
      const f = m[r]![c]!;
      if (r !== c && f !== 0) for (let j = 0; j < 2 * n; j++) m[r]![j]! -= f * m[c]![j]!;
    }
  }
  return m.map((row) => row.slice(n));
}
