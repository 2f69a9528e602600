"""Engine conventions checked against closed forms (run by hand: python3 tools/outside/check_engines.py).

  1. Coulomb sliding: a box launched at v0 on the floor stops after v0²/(2μg) (both engines), which
     confirms that the μ written in truth.json is the μ the engine applied (friction combination).
  2. A push: a constant force F over a window on a body in the air changes its velocity by F·T/m.
  3. Sinking: how far below its geometric rest height each engine's resting body settles.
"""
import sys, os
import numpy as np
sys.path.insert(0, os.path.dirname(__file__))
from shapes import Box, Sphere
from engines import simulate, G

ok = True
for engine in ("mujoco", "pybullet"):
    for mu, v0 in ((0.1, 1.0), (0.3, 1.5), (0.8, 2.0)):
        box = Box([0.3, 0.2, 0.25])
        case = dict(engine=engine, mass=2.0, mu=mu, fps=30, seconds=1.5,
                    initialState=dict(position=[0, 0.1, 0], rotation=[0, 0, 0, 1], velocity=[v0, 0, 0]))
        xs, qs = simulate(case, box)
        d = xs[-1, 0] - xs[0, 0]
        want = v0 ** 2 / (2 * mu * G)
        err = d / want - 1
        ok &= abs(err) < 0.01
        print(f"{engine:8s} slide  mu={mu:.2f} v0={v0}: distance {d:.4f} m, closed form {want:.4f} m ({100*err:+.2f}%)")
    for m in (0.3, 2.5, 10.0):
        box = Box([0.3, 0.2, 0.25])
        case = dict(engine=engine, mass=m, mu=0.5, fps=30, seconds=0.2,
                    initialState=dict(position=[0, 0.1, 0], rotation=[0, 0, 0, 1]))
        xs, _ = simulate(case, box)
        sink = 0.1 - xs[0, 1]
        drift = np.abs(xs[:, 1] - xs[0, 1]).max()
        print(f"{engine:8s} rest   m={m:5.1f} kg: sinks {1000*sink:+.3f} mm below the geometric rest height (moves {1000*drift:.3f} mm after)")
    sph = Sphere(0.1)
    F, T, m = 3.0, 0.2, 1.5
    case = dict(engine=engine, mass=m, mu=0.5, fps=30, seconds=0.4, dropped=True,
                impulses=[dict(force=[F, 0, 0], point=[0, 0, 0], start=0.1, duration=T)],
                initialState=dict(position=[0, 3.0, 0], rotation=[0, 0, 0, 1]))
    xs, _ = simulate(case, sph)
    v = (xs[-1, 0] - xs[-2, 0]) * 30
    err = v / (F * T / m) - 1
    ok &= abs(err) < 0.005
    print(f"{engine:8s} push   in the air: Δv {v:.5f} m/s, F·T/m {F*T/m:.5f} ({100*err:+.3f}%)")
print("all within tolerance" if ok else "SOME CHECK FAILED")
sys.exit(0 if ok else 1)
