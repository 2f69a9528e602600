"""An independent planar model of a box sliding and turning on its four bottom corners (by hand; seconds):
x, z and yaw, exact Coulomb friction μ·N_i against each corner's velocity, the push at its body point, explicit
steps of 1/12,000 s. How the box's weight splits over the corners is not fixed by rigid-body mechanics (four
unknowns, three equations): `equal` gives each corner mg/4; `plane` takes the smallest loads (least squares) that
balance the friction's moments about the centre of mass — loads linear in the corner's position, the split of a
uniformly compliant floor such as gradsim's. Prints where the box ends against the engine's trajectory (truth.json).

    python3 tools/outside/planar_reference.py outside/box-spun-pybullet
    python3 tools/outside/planar_reference.py outside-held-out/box-turning-mujoco
"""
import json
import os
import sys

import numpy as np

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "data")
DT = 1 / 12000
G = 9.81


def rotation(theta):
    """Rotation by theta about +y acting on (x, z)."""
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[c, s], [-s, c]])


def yaw_of(q):
    return 2 * np.arctan2(q[1], q[3])


def simulate(scene, truth, split):
    m, mu = truth["mass"], truth["mu"]
    sx, sy, sz = scene["mesh"]["scale"]
    half_height = sy / 2
    inertia = m * (sx**2 + sz**2) / 12
    corners = np.array([[sx / 2, sz / 2], [sx / 2, -sz / 2], [-sx / 2, sz / 2], [-sx / 2, -sz / 2]])
    x = np.array([scene["initialState"]["position"][0], scene["initialState"]["position"][2]], float)
    yaw = yaw_of(scene["initialState"]["rotation"])
    v, w, t = np.zeros(2), 0.0, 0.0
    end = (len(truth["trajectory"]["t"]) - 1) / truth["fps"]
    while t < end - 1e-12:
        R = rotation(yaw)
        r = (R @ corners.T).T
        force, torque = np.zeros(2), 0.0
        for p in scene["impulses"]:
            if p["start"] <= t < p["start"] + p["duration"]:
                f = np.array([p["force"][0], p["force"][2]])
                at = R @ np.array([p["point"][0], p["point"][2]])
                force += f
                torque += at[1] * f[0] - at[0] * f[1]  # (r × f)_y
        # Corner velocities v + ω ŷ × r = v + ω (r_z, −r_x).
        velocity = v + w * np.stack([r[:, 1], -r[:, 0]], 1)
        direction = velocity / np.maximum(np.linalg.norm(velocity, axis=1, keepdims=True), 1e-4)
        loads = np.full(4, m * G / 4)
        if split == "plane":
            # Σ N = mg, Σ N r = −h/2 · F_friction (the friction acts h/2 below the centre of mass); fixed point in N.
            A = np.stack([np.ones(4), r[:, 0], r[:, 1]])
            for _ in range(6):
                friction = (-mu * loads[:, None] * direction).sum(0)
                rhs = np.array([m * G, -half_height * friction[0], -half_height * friction[1]])
                loads = np.maximum(np.linalg.lstsq(A, rhs, rcond=None)[0], 0)
        friction = -mu * loads[:, None] * direction
        force += friction.sum(0)
        torque += float(np.sum(r[:, 1] * friction[:, 0] - r[:, 0] * friction[:, 1]))
        v = v + DT * force / m
        w = w + DT * torque / inertia
        x = x + DT * v
        yaw += DT * w
        t += DT
    return x, yaw


def main(case):
    d = os.path.join(DATA, case)
    scene = json.load(open(os.path.join(d, "scene.json")))
    truth = json.load(open(os.path.join(d, "truth.json")))
    tr = truth["trajectory"]
    yaw0 = yaw_of(tr["rotation"][0])
    print(f"{case}: {truth['engine']} ends at x {tr['position'][-1][0] * 1e3:.1f}, z {tr['position'][-1][2] * 1e3:.1f} mm, "
          f"turned {np.degrees(yaw_of(tr['rotation'][-1]) - yaw0):.1f}°")
    for split in ("equal", "plane"):
        x, yaw = simulate(scene, truth, split)
        print(f"  planar model, loads {split:5s}: ends at x {x[0] * 1e3:.1f}, z {x[1] * 1e3:.1f} mm, "
              f"turned {np.degrees(yaw - yaw0):.1f}°")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "outside/box-spun-pybullet")
