"""A labelled stand-in for RISP's real-world quadrotor video (RISP App. C.2; issue 62).

The paper's clip (14.4 s at 10 Hz, a hand-flown commercial quadrotor, a calibrated fixed camera, MoCap for testing
only) is not public. This makes a video gradsim did not make, with what the paper says made its clip hard:
  - physics by MuJoCo (3.x, RK4 at 1 ms), not gradsim: a body 3.3% heavier than the "empirical" 3 kg a user gives
    gradsim, its inertia 12% larger, linear and quadratic air drag on translation and rotation, smooth random gusts
    (Ornstein–Uhlenbeck forces and torques), gravity 9.81 (gradsim's model: 9.8), a pilot's 10 ms command delay;
  - flown by a pilot (a cascaded PD controller with integral action that knows none of the above) along a smooth
    figure through the camera's view, rotors within gradsim's thrust box hover·(1 ± 0.1);
  - rendered by POV-Ray (3.7): an area light with soft shadows, a checkered wooden floor, a glossy body in colours near
    but not equal to the model's, rendered at 128² and area-averaged to the predictor's 32², then vignetting and
    sensor noise.
It writes examples/data/risp-quadrotor-standin/: frames/frame-NNN.png (144 frames: the states 0.1, 0.2, ... 14.4 s
after the start, as gradsim's rollouts store them), plate.png (the view without the quadrotor), truth.json (the
"MoCap": position and quaternion per frame and at the start, the engine's settings) and scene.json (what the user
knows: the camera, the frame rate, the nominal mass).

    pip install mujoco pillow numpy ; apt-get install -y povray
    npx tsx tools/risp-standin/export-quadrotor.ts     # quadrotor.json from gradsim's model (committed)
    python3 tools/risp-standin/make_standin.py          # a few minutes on 2 cores
"""
import json
import os
import sys

import mujoco
import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "outside"))
from geometry import M, lookat_to_opencv, povray_camera, quat_xyzw_to_matrix  # noqa: E402
from render_povray import render, sensor  # noqa: E402

OUT = os.path.join(HERE, "..", "..", "examples", "data", "risp-quadrotor-standin")
MODEL = json.load(open(os.path.join(HERE, "quadrotor.json")))

FRAMES, FRAME_S, PHYS_DT, PILOT_EVERY = 144, MODEL["frameSeconds"], 1e-3, 10
MASS = 3.1  # the nominal ("empirical") 3 kg is what gradsim is told
INERTIA_SCALE = 1.12
G = 9.81
HOVER = MODEL["nominalMass"] * 9.8 / 4  # gradsim's thrust unit: hover of the nominal mass
THRUST_LO, THRUST_HI = HOVER * (1 - MODEL["thrustRange"]), HOVER * (1 + MODEL["thrustRange"])
DRAG_LIN, DRAG_QUAD, DRAG_ROT = 0.25, 0.35, 0.02  # N·s/m, N·s²/m², N·m·s
GUST_SIGMA, GUST_TAU, GUST_TORQUE = 0.6, 0.8, 0.01  # N, s, N·m
RES, OVERSAMPLE = 32, 4
SEED = 20260
rotors = np.array(MODEL["rotors"]).reshape(4, 3)
spin = np.array(MODEL["spin"])
arm = rotors[0, 0]


def path(t):
    """The pilot's target position (gradsim frame, y up) and yaw at time t: a slow figure, eased in from hover."""
    ease = 1.0 if t > 2.0 else (t / 2.0) ** 2 * (3 - 2 * t / 2.0)
    w = 2 * np.pi
    p = np.array([0.12 * np.sin(w * t / 7.2), 1.0 + 0.08 * np.sin(w * t / 4.8), 0.08 * np.sin(w * t / 3.6)])
    start = np.array([0.0, 1.0, 0.0])
    return start + ease * (p - start), 0.3 + ease * 0.25 * np.sin(w * t / 9.6)


def yaw_quat(yaw):
    return np.array([0.0, np.sin(yaw / 2), 0.0, np.cos(yaw / 2)])


def mujoco_model():
    i = np.array(MODEL["inertiaPerKg"]).reshape(3, 3).diagonal() * MASS * INERTIA_SCALE
    # Engine body frame = Mᵀ · gradsim body frame: gradsim's body y (up, iy) is the engine's z.
    xml = f"""<mujoco><option timestep="{PHYS_DT}" gravity="0 0 {-G}" integrator="RK4"/>
      <worldbody><body name="quad" pos="0 0 1"><freejoint/>
        <inertial pos="0 0 0" mass="{MASS}" diaginertia="{i[0]} {i[2]} {i[1]}"/>
        <geom type="sphere" size="0.05" contype="0" conaffinity="0" mass="0"/>
      </body></worldbody></mujoco>"""
    return mujoco.MjModel.from_xml_string(xml)


def state_gradsim(d):
    """Position, quaternion (x, y, z, w), velocity and angular velocity (world) in gradsim's frame."""
    x = M @ d.qpos[:3]
    w_, x_, y_, z_ = d.qpos[3:7]
    q = np.concatenate([M @ np.array([x_, y_, z_]), [w_]])
    v = M @ d.qvel[:3]
    # MuJoCo's free-joint angular velocity is in the body frame: to world, then to gradsim.
    R_e = quat_xyzw_to_matrix(np.array([x_, y_, z_, w_]))
    omega = M @ (R_e @ d.qvel[3:6])
    return x, q, v, omega


def set_state(d, x, q):
    d.qpos[:3] = M.T @ x
    v = M.T @ q[:3]
    d.qpos[3:7] = [q[3], *v]
    d.qvel[:] = 0


def pilot(x, q, v, omega, t, integral):
    """Thrusts [4] (N) that steer toward the path: PD(+I) on position, a geometric attitude PD, rotor allocation."""
    target, yaw = path(t)
    eps = 1e-3
    vt = (path(t + eps)[0] - path(t - eps)[0]) / (2 * eps)
    at = (path(t + eps)[0] - 2 * target + path(t - eps)[0]) / eps ** 2
    e = target - x
    integral += e * PILOT_EVERY * PHYS_DT
    a = at + 4.0 * e + 3.2 * (vt - v) + 1.0 * integral
    F = MODEL["nominalMass"] * (a + np.array([0, 9.8, 0]))
    R = quat_xyzw_to_matrix(q)
    b_up = F / np.linalg.norm(F)
    heading = np.array([np.cos(yaw), 0, -np.sin(yaw)])  # body +x after a turn by yaw about +y
    b_z = np.cross(heading, b_up)
    b_z /= np.linalg.norm(b_z)
    b_x = np.cross(b_up, b_z)
    Rd = np.stack([b_x, b_up, b_z], 1)
    E = 0.5 * (Rd.T @ R - R.T @ Rd)
    e_R = np.array([E[2, 1], E[0, 2], E[1, 0]])
    w_body = R.T @ omega
    J = np.array(MODEL["inertiaPerKg"]).reshape(3, 3).diagonal() * MODEL["nominalMass"]
    tau = J * (-60.0 * e_R - 14.0 * w_body)
    T = float(F @ (R @ np.array([0, 1, 0])))
    # Body torques of thrusts T_i at rotors r_i (force up): τx = a(T3 − T1), τz = a(T0 − T2), τy = Σ spin_i T_i.
    A = np.array([[1, 1, 1, 1], [0, -arm, 0, arm], [*spin], [arm, 0, -arm, 0]])
    T = np.clip(T, 4 * THRUST_LO, 4 * THRUST_HI)
    # Within the rotors' box, a pilot gives up yaw first, then tilt: shrink them until the thrusts fit.
    for yaw_share, tilt_share in [(1, 1), (0.5, 1), (0, 1), (0, 0.7), (0, 0.5), (0, 0.3), (0, 0.15), (0, 0)]:
        thrusts = np.linalg.solve(A, np.array([T, tilt_share * tau[0], yaw_share * tau[1], tilt_share * tau[2]]))
        if thrusts.min() >= THRUST_LO and thrusts.max() <= THRUST_HI:
            break
    return np.clip(thrusts, THRUST_LO, THRUST_HI), integral


def simulate():
    m = mujoco_model()
    d = mujoco.MjData(m)
    x0, yaw0 = path(0.0)
    set_state(d, x0, yaw_quat(yaw0))
    rng = np.random.default_rng(SEED)
    steps_per_frame = int(round(FRAME_S / PHYS_DT))
    gust, gust_tq = np.zeros(3), np.zeros(3)
    integral = np.zeros(3)
    command = delayed = np.full(4, MODEL["nominalMass"] * 9.8 / 4)
    poses = [(*state_gradsim(d)[:2],)]
    applied = []
    for k in range(FRAMES * steps_per_frame):
        t = k * PHYS_DT
        x, q, v, omega = state_gradsim(d)
        if k % PILOT_EVERY == 0:
            delayed = command  # the command issued one pilot tick (10 ms) ago reaches the rotors now
            command, integral = pilot(x, q, v, omega, t, integral)
        R = quat_xyzw_to_matrix(q)
        up = R @ np.array([0, 1, 0])
        force = up * delayed.sum()
        torque = R @ (np.cross(rotors, np.outer(delayed, [0, 1, 0])).sum(0) + np.array([0, spin @ delayed, 0]))
        # Unmodelled: drag and gusts (OU processes).
        gust += -gust / GUST_TAU * PHYS_DT + GUST_SIGMA * np.sqrt(2 * PHYS_DT / GUST_TAU) * rng.normal(size=3)
        gust_tq += -gust_tq / GUST_TAU * PHYS_DT + GUST_TORQUE * np.sqrt(2 * PHYS_DT / GUST_TAU) * rng.normal(size=3)
        force = force - DRAG_LIN * v - DRAG_QUAD * np.linalg.norm(v) * v + gust
        torque = torque - DRAG_ROT * omega + gust_tq
        d.xfrc_applied[1, :3] = M.T @ force
        d.xfrc_applied[1, 3:] = M.T @ torque
        mujoco.mj_step(m, d)
        applied.append(delayed)
        if (k + 1) % steps_per_frame == 0:
            poses.append(state_gradsim(d)[:2])
    thrusts = np.array(applied).reshape(FRAMES, steps_per_frame, 4).mean(1)
    return poses, thrusts


SCENE = """#version 3.7;
global_settings { assumed_gamma 1.0 max_trace_level 6 ambient_light rgb <0.30, 0.30, 0.34> }
sky_sphere { pigment { gradient y color_map { [0 color rgb <0.50, 0.48, 0.45>] [1 color rgb <0.26, 0.30, 0.38>] } } }
light_source { <-1.4, 3.4, -1.8> color rgb <1.1, 1.02, 0.9>
  area_light <1.2, 0, 0>, <0, 0, 0.8>, 5, 5 adaptive 1 jitter circular orient }
light_source { <2.5, 2.0, -3.0> color rgb <0.16, 0.18, 0.22> shadowless }
plane { y, 0
  texture { pigment { checker
      pigment { wood color_map { [0 color rgb <0.55, 0.38, 0.22>] [1 color rgb <0.42, 0.27, 0.15>] } scale 0.05 }
      pigment { color rgb <0.78, 0.74, 0.66> } scale 0.25 }
    normal { bumps 0.03 scale 0.01 } finish { diffuse 0.8 ambient 0.06 specular 0.1 roughness 0.05 } } }
"""


def quad_block(x, q):
    V = np.array(MODEL["vertices"]).reshape(-1, 3)
    C = np.array(MODEL["colours"]).reshape(-1, 3)
    F = np.array(MODEL["faces"]).reshape(-1, 3)
    W = (quat_xyzw_to_matrix(q) @ V.T).T + x
    tris = []
    for f in F:
        # Near the model's colours, not equal: a warmer, more saturated paint, glossy plastic.
        c = np.clip(C[f[0]] * np.array([1.05, 0.95, 0.85]) * 0.9, 0, 1)
        tris.append("triangle { <%.6f,%.6f,%.6f>, <%.6f,%.6f,%.6f>, <%.6f,%.6f,%.6f> texture { pigment { rgb <%.4f,%.4f,%.4f> }"
                    " finish { diffuse 0.75 ambient 0.08 specular 0.45 roughness 0.02 } } }" % (*W[f[0]], *W[f[1]], *W[f[2]], *c))
    return "union {\n" + "\n".join(tris) + "\n}\n"


def frame_image(pov_extra, path_png, seed):
    cam = MODEL["camera"]
    big = RES * OVERSAMPLE
    K, R, t = lookat_to_opencv(cam["eye"], cam["at"], cam["fovY"], big, big)
    tmp = path_png + ".big.png"
    render(SCENE + povray_camera(K, R, t) + "\n" + pov_extra, K, tmp)
    img = np.asarray(Image.open(tmp).convert("RGB"), float)
    os.remove(tmp)
    # gradsim's RISP environments draw SoftRas' mirror-image look-at (camera.convention "softras-mirror").
    if cam.get("convention") == "softras-mirror":
        img = img[:, ::-1]
    small = img.reshape(RES, OVERSAMPLE, RES, OVERSAMPLE, 3).mean((1, 3))
    Image.fromarray(np.clip(np.round(small), 0, 255).astype(np.uint8)).save(path_png)
    sensor(path_png, path_png, seed, read_sigma=0.012, shot=0.015, vignette=0.1)


def main():
    poses, thrusts = simulate()
    os.makedirs(os.path.join(OUT, "frames"), exist_ok=True)
    xs = np.array([p[0] for p in poses])
    print(f"simulated {FRAMES} frames: x in [{xs[:, 0].min():.2f}, {xs[:, 0].max():.2f}], "
          f"y in [{xs[:, 1].min():.2f}, {xs[:, 1].max():.2f}], z in [{xs[:, 2].min():.2f}, {xs[:, 2].max():.2f}]; "
          f"thrusts {thrusts.min():.3f}..{thrusts.max():.3f} N (box {THRUST_LO:.3f}..{THRUST_HI:.3f})")
    frame_image("", os.path.join(OUT, "plate.png"), SEED)
    for k in range(FRAMES):
        x, q = poses[k + 1]
        frame_image(quad_block(x, q), os.path.join(OUT, "frames", f"frame-{k:03d}.png"), SEED + 1 + k)
        if k % 24 == 0:
            print(f"rendered frame {k + 1}/{FRAMES}", flush=True)
    truth = {
        "note": "The stand-in's MoCap: poses in gradsim's frame (y up), quaternions (x, y, z, w). start: t = 0, at rest; "
                "frames[k]: t = (k + 1)·0.1 s. For evaluation only; no pipeline reads it.",
        "start": {"position": list(poses[0][0]), "quaternion": list(poses[0][1])},
        "frames": [{"position": list(p[0]), "quaternion": list(p[1])} for p in poses[1:]],
        "engine": {"physics": f"MuJoCo {mujoco.__version__}, RK4, {PHYS_DT} s", "renderer": "POV-Ray 3.7",
                   "mass": MASS, "inertiaScale": INERTIA_SCALE, "gravity": G,
                   "drag": {"linear": DRAG_LIN, "quadratic": DRAG_QUAD, "rotational": DRAG_ROT},
                   "gusts": {"force": GUST_SIGMA, "torque": GUST_TORQUE, "correlationSeconds": GUST_TAU},
                   "commandDelaySeconds": PILOT_EVERY * PHYS_DT, "seed": SEED},
        "thrusts": thrusts.tolist(),
    }
    json.dump(truth, open(os.path.join(OUT, "truth.json"), "w"), indent=1)
    scene = {
        "note": "What the user knows (RISP App. C.2): the calibrated camera, the frame rate, the quadrotor's empirical "
                "mass and its mesh (gradsim's risp.quadrotorEnv()). The video starts at hover, at rest.",
        "camera": MODEL["camera"], "resolution": RES, "fps": 1 / FRAME_S, "frames": FRAMES,
        "nominalMass": MODEL["nominalMass"],
    }
    json.dump(scene, open(os.path.join(OUT, "scene.json"), "w"), indent=1)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
