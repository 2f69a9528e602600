"""World frames, rotations and cameras shared by the outside-video generators.

gradsim's world is right-handed and y-up with the ground plane y = 0. MuJoCo and PyBullet are
z-up. Everything in these tools is written in gradsim's frame; the engine adapters convert at
their boundary with the proper rotation M (a −90° turn about x): gradsim = M · engine, i.e.
(x, y, z)_engine ↦ (x, z, −y)_gradsim. The same M maps body frames, so a body's engine-local
z axis (MuJoCo's and Bullet's cylinder axis) is gradsim's body y axis (gradsim's cylinder axis).
"""
import numpy as np

M = np.array([[1.0, 0, 0], [0, 0, 1.0], [0, -1.0, 0]])  # engine (z-up) → gradsim (y-up)


def to_engine(v):
    return M.T @ np.asarray(v, float)


def to_gradsim(v):
    return M @ np.asarray(v, float)


def quat_xyzw_to_matrix(q):
    x, y, z, w = np.asarray(q, float) / np.linalg.norm(q)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def quat_engine_to_gradsim(q_xyzw):
    """R_g = M R_e Mᵀ: conjugating by a rotation turns the quaternion's axis by it."""
    q = np.asarray(q_xyzw, float)
    return np.concatenate([M @ q[:3], q[3:]])


def quat_gradsim_to_engine(q_xyzw):
    q = np.asarray(q_xyzw, float)
    return np.concatenate([M.T @ q[:3], q[3:]])


def yaw_quat(deg):
    """Rotation about gradsim's +y by `deg` degrees, as (x, y, z, w)."""
    h = np.radians(deg) / 2
    return np.array([0.0, np.sin(h), 0.0, np.cos(h)])


# ---------------------------------------------------------------------------------------------
# Cameras. Both scene-file forms become one OpenCV pinhole (K, R, t): x_cam = R x_world + t,
# camera x right, y down, z forward, pixel centres at integers.

def lookat_to_opencv(eye, at, fov_y_deg, width, height, up=(0, 1, 0)):
    """A physical camera at `eye` looking at `at`: image right = forward × up, image down = forward × right."""
    eye, at, up = (np.asarray(v, float) for v in (eye, at, up))
    f = at - eye
    f /= np.linalg.norm(f)
    r = np.cross(f, up)
    r /= np.linalg.norm(r)
    d = np.cross(f, r)
    R = np.stack([r, d, f])
    t = -R @ eye
    fy = (height / 2) / np.tan(np.radians(fov_y_deg) / 2)
    K = dict(fx=fy, fy=fy, cx=(width - 1) / 2, cy=(height - 1) / 2, width=width, height=height)
    return K, R, t


def camera_of_scene(cam):
    """(K, R, t) of a scene file's camera (either form; width/height from the intrinsics or the case)."""
    if "intrinsics" in cam:
        return dict(cam["intrinsics"]), np.array(cam["pose"]["R"], float), np.array(cam["pose"]["t"], float)
    return lookat_to_opencv(cam["eye"], cam["at"], cam["fovY"], cam["_width"], cam["_height"], cam.get("up", (0, 1, 0)))


def project(K, R, t, pts):
    """Pixel coordinates (u right, v down) of world points, OpenCV pinhole."""
    pc = (R @ np.asarray(pts, float).T).T + t
    u = K["fx"] * pc[:, 0] / pc[:, 2] + K["cx"]
    v = K["fy"] * pc[:, 1] / pc[:, 2] + K["cy"]
    return np.stack([u, v], 1), pc[:, 2]


def povray_camera(K, R, t):
    """POV-Ray camera block equal to the OpenCV pinhole.

    POV-Ray casts the ray through image point (s, q) ∈ [−½, ½]² (s left→right, q bottom→top) as
    direction + s·right + q·up. Pixel column i's centre is s = (i + ½)/W − ½, row j's is
    q = ½ − (j + ½)/H. With right = x·W/fx, up = −y·H/fy and direction = z + ((W−1)/2 − cx)/fx·x
    + ((H−1)/2 − cy)/fy·y, that ray is z + (i − cx)/fx·x + (j − cy)/fy·y: OpenCV's. The vectors are
    given explicitly (no look_at), so POV-Ray's left-handedness never enters: geometry is placed
    in gradsim's coordinates as they are.
    """
    W, H = K["width"], K["height"]
    x, y, z = R[0], R[1], R[2]
    eye = -R.T @ t
    direction = z + ((W - 1) / 2 - K["cx"]) / K["fx"] * x + ((H - 1) / 2 - K["cy"]) / K["fy"] * y
    right = x * W / K["fx"]
    up = -y * H / K["fy"]
    v = lambda a: "<%.9f, %.9f, %.9f>" % tuple(a)
    return "camera { perspective location %s direction %s right %s up %s }" % (v(eye), v(direction), v(right), v(up))


def opencv_from_view(eye, at, fx, width, height, cx=None, cy=None, up=(0, 1, 0)):
    """An OpenCV camera (for the scene file's calibrated form) built from a viewpoint."""
    K, R, t = lookat_to_opencv(eye, at, 40, width, height, up)
    K = dict(fx=fx, fy=fx, cx=(width - 1) / 2 if cx is None else cx, cy=(height - 1) / 2 if cy is None else cy, width=width, height=height)
    return K, R, t
