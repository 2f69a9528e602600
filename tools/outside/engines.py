"""Simulate one outside case with MuJoCo or PyBullet; return its states at the video's frame times.

Inputs and outputs are in gradsim's y-up frame (geometry.py converts at the boundary).
Conventions kept identical in both engines:
  - time step DT = 1/1200 s (40 steps per 30 fps frame), so push windows on multiples of 1/1200 s
    are exact: a constant force F over [start, start + duration] gives the impulse F·duration;
  - the push acts at the body point `point` (body frame, from the COM): force F at the COM plus the
    torque (R·point) × F, recomputed every step (it turns with the body);
  - Coulomb friction μ between body and floor (MuJoCo takes the max of the two geoms' μ, Bullet
    their product: floor 1 × body μ), no rolling/torsional friction, no air or joint damping;
  - the body's mass and inertia are given explicitly (uniform density of the exact shape);
  - a resting body is first settled for SETTLE s with no push, then the clock starts (t = 0, frame 0):
    frame 0 shows the engine's resting state, which sits `sink` below the geometric rest height.
"""
import numpy as np
from geometry import to_engine, to_gradsim, quat_engine_to_gradsim, quat_gradsim_to_engine, quat_xyzw_to_matrix

DT = 1.0 / 1200
SETTLE = 0.5
G = 9.81


def _push_force(case, t, R_g):
    """World force and torque (gradsim frame) of the case's pushes at time t (a step's start)."""
    F, T = np.zeros(3), np.zeros(3)
    for p in case.get("impulses", []):
        if p["start"] - 1e-9 <= t < p["start"] + p["duration"] - 1e-9:
            f = np.asarray(p["force"], float)
            F += f
            T += np.cross(R_g @ np.asarray(p["point"], float), f)
    return F, T


def _frames(case):
    return int(round(case["seconds"] * case["fps"])) + 1


def simulate(case, shape):
    return {"mujoco": simulate_mujoco, "pybullet": simulate_pybullet}[case["engine"]](case, shape)


# ----------------------------------------------------------------------------------------- MuJoCo

def _mujoco_xml(case, shape, pos_e, quat_e_wxyz):
    m = case["mass"]
    Ie = np.abs(to_engine(shape.inertia_diag(m)))  # diag permutes under M: (Ix, Iy, Iz) → (Ix, Iz, Iy)
    mu = case["mu"]
    fr = f'friction="{mu} 0 0"'
    if shape.kind == "box":
        h = np.abs(to_engine(shape.size / 2))
        geom = f'<geom type="box" size="{h[0]} {h[1]} {h[2]}" {fr}/>'
        asset = ""
    elif shape.kind == "cylinder":
        geom = f'<geom type="cylinder" size="{shape.r} {shape.h / 2}" {fr}/>'
        asset = ""
    elif shape.kind == "sphere":
        geom = f'<geom type="sphere" size="{shape.r}" {fr}/>'
        asset = ""
    else:
        Ve = (shape.V @ np.asarray([[1, 0, 0], [0, 0, -1], [0, 1, 0]]).T)  # rows: Mᵀ v
        vtx = " ".join("%.9f" % x for x in Ve.ravel())
        fcs = " ".join(str(i) for i in shape.F.ravel())
        asset = f'<asset><mesh name="obj" vertex="{vtx}" face="{fcs}"/></asset>'
        geom = f'<geom type="mesh" mesh="obj" {fr}/>'
    return f"""<mujoco>
  <option timestep="{DT}" gravity="0 0 {-G}" cone="{case.get('cone', 'elliptic')}"/>
  {asset}
  <worldbody>
    <geom name="floor" type="plane" size="0 0 1" {fr}/>
    <body name="obj" pos="{pos_e[0]} {pos_e[1]} {pos_e[2]}" quat="{quat_e_wxyz[0]} {quat_e_wxyz[1]} {quat_e_wxyz[2]} {quat_e_wxyz[3]}">
      <freejoint/>
      <inertial pos="0 0 0" mass="{m}" diaginertia="{Ie[0]} {Ie[1]} {Ie[2]}"/>
      {geom}
    </body>
  </worldbody>
</mujoco>"""


def simulate_mujoco(case, shape):
    import mujoco
    st = case["initialState"]
    qe = quat_gradsim_to_engine(st["rotation"])
    model = mujoco.MjModel.from_xml_string(_mujoco_xml(case, shape, to_engine(st["position"]), [qe[3], *qe[:3]]))
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    bid = model.body("obj").id

    def state():
        x = to_gradsim(data.qpos[:3])
        w, qx, qy, qz = data.qpos[3:7]
        return x, quat_engine_to_gradsim([qx, qy, qz, w])

    if not case.get("dropped"):
        for _ in range(int(round(SETTLE / DT))):
            mujoco.mj_step(model, data)
        data.qvel[:] = 0
    data.qvel[0:3] = to_engine(st.get("velocity", [0, 0, 0]))
    # MuJoCo's free joint angular velocity is in the body frame.
    w_world_e = to_engine(st.get("angularVelocity", [0, 0, 0]))
    R_e = data.xmat[bid].reshape(3, 3)
    data.qvel[3:6] = R_e.T @ w_world_e
    data.time = 0.0
    steps = int(round(1 / (case["fps"] * DT)))
    xs, qs = [], []
    for k in range(_frames(case)):
        x, q = state()
        xs.append(x)
        qs.append(q)
        for s in range(steps):
            t = (k * steps + s) * DT
            F, T = _push_force(case, t, quat_xyzw_to_matrix(state()[1]))
            data.xfrc_applied[bid, :3] = to_engine(F)
            data.xfrc_applied[bid, 3:] = to_engine(T)
            mujoco.mj_step(model, data)
    return np.array(xs), np.array(qs)


# --------------------------------------------------------------------------------------- PyBullet

def simulate_pybullet(case, shape):
    import pybullet as p
    cid = p.connect(p.DIRECT)
    try:
        p.setGravity(0, 0, -G, physicsClientId=cid)
        p.setPhysicsEngineParameter(fixedTimeStep=DT, numSolverIterations=100, numSubSteps=0, physicsClientId=cid)
        if "cone" in case:  # check_friction_laws.py: "cone" (Bullet's default) or Bullet's per-direction clamp
            p.setPhysicsEngineParameter(enableConeFriction=int(case["cone"] == "cone"), physicsClientId=cid)
        plane = p.createMultiBody(0, p.createCollisionShape(p.GEOM_PLANE, physicsClientId=cid), physicsClientId=cid)
        if shape.kind == "box":
            col = p.createCollisionShape(p.GEOM_BOX, halfExtents=list(np.abs(to_engine(shape.size / 2))), physicsClientId=cid)
        elif shape.kind == "cylinder":
            col = p.createCollisionShape(p.GEOM_CYLINDER, radius=shape.r, height=shape.h, physicsClientId=cid)
        elif shape.kind == "sphere":
            col = p.createCollisionShape(p.GEOM_SPHERE, radius=shape.r, physicsClientId=cid)
        else:
            Ve = [list(to_engine(v)) for v in shape.V]
            col = p.createCollisionShape(p.GEOM_MESH, vertices=Ve, physicsClientId=cid)  # convex hull
        st = case["initialState"]
        body = p.createMultiBody(case["mass"], col, basePosition=list(to_engine(st["position"])),
                                 baseOrientation=list(quat_gradsim_to_engine(st["rotation"])), physicsClientId=cid)
        e = case.get("restitution", 0.0)
        p.changeDynamics(plane, -1, lateralFriction=1.0, restitution=1.0 if e else 0.0, physicsClientId=cid)
        p.changeDynamics(body, -1, lateralFriction=case["mu"], restitution=e, linearDamping=0, angularDamping=0,
                         rollingFriction=0, spinningFriction=0,
                         localInertiaDiagonal=list(np.abs(to_engine(shape.inertia_diag(case["mass"])))), physicsClientId=cid)

        def state():
            x, q = p.getBasePositionAndOrientation(body, physicsClientId=cid)
            return to_gradsim(x), quat_engine_to_gradsim(q)

        if not case.get("dropped"):
            for _ in range(int(round(SETTLE / DT))):
                p.stepSimulation(physicsClientId=cid)
        p.resetBaseVelocity(body, list(to_engine(st.get("velocity", [0, 0, 0]))), list(to_engine(st.get("angularVelocity", [0, 0, 0]))), physicsClientId=cid)
        steps = int(round(1 / (case["fps"] * DT)))
        xs, qs = [], []
        for k in range(_frames(case)):
            x, q = state()
            xs.append(x)
            qs.append(q)
            for s in range(steps):
                t = (k * steps + s) * DT
                xg, qg = state()
                F, T = _push_force(case, t, quat_xyzw_to_matrix(qg))
                if np.any(F):
                    # Bullet applies a world force at a world point: the COM plus R·point gives F and (R·point) × F.
                    pt = case_point_world(case, t, xg, qg)
                    p.applyExternalForce(body, -1, list(to_engine(F)), list(to_engine(pt)), p.WORLD_FRAME, physicsClientId=cid)
                p.stepSimulation(physicsClientId=cid)
        return np.array(xs), np.array(qs)
    finally:
        p.disconnect(cid)


def case_point_world(case, t, x, q):
    """The world point of the (single) active push; several pushes at once at different points are not used."""
    R = quat_xyzw_to_matrix(q)
    act = [pp for pp in case.get("impulses", []) if pp["start"] - 1e-9 <= t < pp["start"] + pp["duration"] - 1e-9]
    assert len(act) == 1, "PyBullet adapter: one push at a time"
    return x + R @ np.asarray(act[0]["point"], float)
