"""Port of gradsim's Table 4 soft-body scene (bench/table4.ts + bench/physics.ts boxFor/stepsFor,
src/models/meshes/tet-grid.ts tetBox, fem/build.ts, fem/forces.ts, contact/ground.ts,
particles/step.ts), as host numpy arrays (float64 geometry cast to float32, as gradsim does)."""
import math

import numpy as np

# gradsim tetBox split (differs from the shared W4 generator's order): central tet first.
EVEN = [[1, 2, 4, 7], [0, 1, 2, 4], [3, 1, 2, 7], [5, 1, 4, 7], [6, 2, 4, 7]]
ODD = [[0, 3, 5, 6], [1, 0, 3, 5], [2, 0, 3, 6], [4, 0, 5, 6], [7, 3, 5, 6]]

SCENE = dict(density=1000.0, mu=1e4, lam=1e4, damping=1.0, activation=0.0, velocity=(1.0, -0.5, 0.0),
             gravity=(0.0, -9.8, 0.0), ground_ke=1e4, ground_kd=10.0, ground_kf=10.0, ground_mu=0.5,
             smoothing=1e-4, dt=1 / 1920,
             lift=0.0005)  # bench/physics.ts BOX_LIFT: the body lands in the 2nd substep


def js_round(v):
    """Math.round (half up), not Python's banker's rounding."""
    return math.floor(v + 0.5)


def box_cells(size):
    """bench/physics.ts boxFor: a box of ~size/5 cubes."""
    cubes = max(1, js_round(size / 5))
    nz = max(1, js_round(math.cbrt(cubes / 4)))
    ny = max(1, js_round(math.sqrt(cubes / (2 * nz))))
    nx = max(1, js_round(cubes / (ny * nz)))
    return nx, ny, nz


def steps_for(tets):
    return 40 if tets <= 200 else 16 if tets <= 2000 else 4


def tet_box(cells, size, origin):
    nx, ny, nz = cells
    k, j, i = np.meshgrid(np.arange(nz + 1), np.arange(ny + 1), np.arange(nx + 1), indexing="ij")
    v = np.stack([origin[0] + (size[0] * i) / nx, origin[1] + (size[1] * j) / ny, origin[2] + (size[2] * k) / nz], -1).reshape(-1, 3)
    k, j, i = [a.reshape(-1) for a in np.meshgrid(np.arange(nz), np.arange(ny), np.arange(nx), indexing="ij")]
    even = ((i + j + k) % 2 == 0)[:, None, None]
    local = np.where(even, np.array(EVEN)[None], np.array(ODD)[None])
    ci, cj, ck = i[:, None, None] + (local & 1), j[:, None, None] + ((local >> 1) & 1), k[:, None, None] + ((local >> 2) & 1)
    t = (ci + (nx + 1) * (cj + (ny + 1) * ck)).reshape(-1, 4)
    a, u, p, q = v[t[:, 0]], v[t[:, 1]] - v[t[:, 0]], v[t[:, 2]] - v[t[:, 0]], v[t[:, 3]] - v[t[:, 0]]
    vol6 = u[:, 0] * (p[:, 1] * q[:, 2] - p[:, 2] * q[:, 1]) + u[:, 1] * (p[:, 2] * q[:, 0] - p[:, 0] * q[:, 2]) + u[:, 2] * (p[:, 0] * q[:, 1] - p[:, 1] * q[:, 0])
    neg = vol6 < 0
    t[neg] = t[neg][:, [0, 1, 3, 2]]
    return v, t.astype(np.int32)


def rest_shape(v, t):
    """fem/build.ts restShape: inverse of Dm (columns X_k - X_0), row-major, and det/6."""
    D = np.empty((t.shape[0], 9))
    for k in range(3):
        for d in range(3):
            D[:, 3 * d + k] = v[t[:, 1 + k], d] - v[t[:, 0], d]
    c00 = D[:, 4] * D[:, 8] - D[:, 5] * D[:, 7]; c01 = D[:, 5] * D[:, 6] - D[:, 3] * D[:, 8]; c02 = D[:, 3] * D[:, 7] - D[:, 4] * D[:, 6]
    det = D[:, 0] * c00 + D[:, 1] * c01 + D[:, 2] * c02
    inv = np.stack([c00, D[:, 2] * D[:, 7] - D[:, 1] * D[:, 8], D[:, 1] * D[:, 5] - D[:, 2] * D[:, 4],
                    c01, D[:, 0] * D[:, 8] - D[:, 2] * D[:, 6], D[:, 2] * D[:, 3] - D[:, 0] * D[:, 5],
                    c02, D[:, 1] * D[:, 6] - D[:, 0] * D[:, 7], D[:, 0] * D[:, 4] - D[:, 1] * D[:, 3]], 1) / det[:, None]
    return inv.reshape(-1, 3, 3), det / 6


def scene(target):
    """Host arrays of the Table 4 soft body for a target tet count (float32 except indices)."""
    nx, ny, nz = box_cells(target)
    v, t = tet_box((nx, ny, nz), (0.05 * nx, 0.05 * ny, 0.05 * nz), (0.0, SCENE["lift"], 0.0))
    inv, vol = rest_shape(v, t)
    mass = np.zeros(v.shape[0])
    for k in range(4):
        np.add.at(mass, t[:, k], SCENE["density"] * vol / 4)
    T = t.shape[0]
    f32 = np.float32
    return dict(cells=(nx, ny, nz), T=T, N=v.shape[0], steps=steps_for(T), dt=SCENE["dt"],
                x0=v.astype(f32), v0=np.broadcast_to(np.array(SCENE["velocity"], f32), v.shape).copy(),
                tets=t, invRest=inv.astype(f32), restVolume=vol.astype(f32), mass=mass.astype(f32),
                mu=np.full(T, SCENE["mu"], f32), lam=np.full(T, SCENE["lam"], f32),
                damping=np.full(T, SCENE["damping"], f32), activation=np.full(T, SCENE["activation"], f32))
