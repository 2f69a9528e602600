"""The bodies of the outside cases, in gradsim's body frame (y up, origin at the centre of mass).

Each shape knows its scene-file `mesh` entry, its mass properties (uniform density), its rest
height (centre-of-mass height when resting on its base), points to draw in the overlay check, and
its POV-Ray object. gradsim's primitives (src/sysid/scenes/shapes.ts): "box" is 1 m across per unit
scale (scale = full extents); "cylinder" has radius 0.45 and half-height 0.5 per unit scale, axis y;
"icosphere" has radius 0.5 per unit scale.
"""
import os
import numpy as np


def read_obj(path):
    verts, faces = [], []
    for line in open(path):
        p = line.split()
        if not p:
            continue
        if p[0] == "v":
            verts.append([float(x) for x in p[1:4]])
        elif p[0] == "f":
            idx = [int(x.split("/")[0]) - 1 for x in p[1:]]
            for k in range(1, len(idx) - 1):
                faces.append([idx[0], idx[k], idx[k + 1]])
    return np.array(verts), np.array(faces, int)


def mesh_mass_properties(V, F):
    """Volume, centre of mass and inertia tensor per unit density of a closed outward-wound mesh."""
    vol, com, C = 0.0, np.zeros(3), np.zeros((3, 3))
    canon = np.array([[2, 1, 1], [1, 2, 1], [1, 1, 2]]) / 120.0
    for f in F:
        A = np.stack([V[f[0]], V[f[1]], V[f[2]]])  # tetrahedron with the origin
        d = np.linalg.det(A)
        vol += d / 6
        com += d / 6 * A.sum(0) / 4
        C += d * A.T @ canon @ A
    com /= vol
    # Covariance about the COM, then inertia I = tr(C) 1 − C.
    C = C - vol * np.outer(com, com)
    return vol, com, np.trace(C) * np.eye(3) - C


class Box:
    kind = "box"

    def __init__(self, size):
        self.size = np.asarray(size, float)  # full extents x, y, z

    def scene_mesh(self):
        return {"shape": "box", "scale": [round(float(s), 6) for s in self.size]}

    def inertia_diag(self, m):
        a, b, c = self.size
        return m / 12 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])

    def rest_height(self):
        return self.size[1] / 2

    def key_points(self):
        h = self.size / 2
        return np.array([[sx * h[0], sy * h[1], sz * h[2]] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])

    def key_edges(self):
        return [(i, j) for i in range(8) for j in range(i + 1, 8) if bin(i ^ j).count("1") == 1]

    def pov(self):
        h = self.size / 2
        return "box { <%g, %g, %g>, <%g, %g, %g> }" % (*(-h), *h)


class Cylinder:
    kind = "cylinder"

    def __init__(self, radius, height):
        self.r, self.h = float(radius), float(height)

    def scene_mesh(self):
        # gradsim's unit cylinder: radius 0.45, height 1 (16 sides).
        s = self.r / 0.45
        return {"shape": "cylinder", "scale": [round(s, 6), round(self.h, 6), round(s, 6)]}

    def inertia_diag(self, m):
        side = m * (3 * self.r ** 2 + self.h ** 2) / 12
        return np.array([side, m * self.r ** 2 / 2, side])

    def rest_height(self):
        return self.h / 2

    def key_points(self):
        a = np.linspace(0, 2 * np.pi, 16, endpoint=False)
        ring = np.stack([self.r * np.cos(a), np.zeros_like(a), self.r * np.sin(a)], 1)
        return np.concatenate([ring + [0, -self.h / 2, 0], ring + [0, self.h / 2, 0]])

    def key_edges(self):
        e = [(i, (i + 1) % 16) for i in range(16)] + [(16 + i, 16 + (i + 1) % 16) for i in range(16)]
        return e + [(i, 16 + i) for i in range(0, 16, 4)]

    def pov(self):
        return "cylinder { <0, %g, 0>, <0, %g, 0>, %g }" % (-self.h / 2, self.h / 2, self.r)


class Sphere:
    kind = "sphere"

    def __init__(self, radius):
        self.r = float(radius)

    def scene_mesh(self):
        return {"shape": "sphere", "scale": [round(2 * self.r, 6)] * 3}

    def inertia_diag(self, m):
        return np.full(3, 0.4 * m * self.r ** 2)

    def rest_height(self):
        return self.r

    def key_points(self):
        a = np.linspace(0, 2 * np.pi, 24, endpoint=False)
        return np.concatenate([
            np.stack([self.r * np.cos(a), np.zeros_like(a), self.r * np.sin(a)], 1),
            np.stack([self.r * np.cos(a), self.r * np.sin(a), np.zeros_like(a)], 1),
            np.stack([np.zeros_like(a), self.r * np.cos(a), self.r * np.sin(a)], 1),
        ])

    def key_edges(self):
        return [(k * 24 + i, k * 24 + (i + 1) % 24) for k in range(3) for i in range(24)]

    def pov(self):
        return "sphere { <0, 0, 0>, %g }" % self.r


class ObjMesh:
    kind = "mesh"

    def __init__(self, path, name):
        self.path, self.name = path, name
        self.V, self.F = read_obj(path)
        vol, com, inertia = mesh_mass_properties(self.V, self.F)
        assert np.abs(com).max() < 1e-9, f"{path}: the OBJ must be centred on its centre of mass (it is off by {com})"
        off = np.abs(inertia - np.diag(np.diag(inertia))).max()
        assert off < 1e-9 * np.abs(inertia).max(), f"{path}: the OBJ's axes must be its principal axes"
        self.volume, self.unit_inertia = vol, np.diag(inertia) / vol

    def scene_mesh(self):
        return {"obj": self.name, "scale": [1, 1, 1]}

    def inertia_diag(self, m):
        return m * self.unit_inertia

    def rest_height(self):
        return -self.V[:, 1].min()

    def key_points(self):
        return self.V

    def key_edges(self):
        return sorted({tuple(sorted((f[i], f[(i + 1) % 3]))) for f in self.F for i in range(3)})

    def pov(self):
        v = ", ".join("<%g, %g, %g>" % tuple(p) for p in self.V)
        f = ", ".join("<%d, %d, %d>" % tuple(t) for t in self.F)
        return "mesh2 { vertex_vectors { %d, %s } face_indices { %d, %s } }" % (len(self.V), v, len(self.F), f)


def write_frustum_obj(path, bottom=0.30, top=0.14, height=0.22, depth_ratio=0.7):
    """A closed truncated pyramid with a rectangular base (bottom × bottom·depth_ratio), top
    (top × top·depth_ratio), written centred on its centre of mass (gradsim body frame, metres)."""
    def rect(w, y):
        d = w * depth_ratio
        return [[-w / 2, y, -d / 2], [w / 2, y, -d / 2], [w / 2, y, d / 2], [-w / 2, y, d / 2]]
    V = np.array(rect(bottom, 0.0) + rect(top, height))
    quads = [[0, 1, 2, 3], [4, 7, 6, 5], [0, 4, 5, 1], [1, 5, 6, 2], [2, 6, 7, 3], [3, 7, 4, 0]]
    F = np.array([t for q in quads for t in ([q[0], q[1], q[2]], [q[0], q[2], q[3]])])
    vol, com, _ = mesh_mass_properties(V, F)
    if vol < 0:  # wound inward: flip
        F = F[:, ::-1]
        vol, com, _ = mesh_mass_properties(V, F)
    V = V - com
    with open(path, "w") as fh:
        fh.write("# truncated rectangular pyramid, metres, y up, origin at the centre of mass (uniform density)\n")
        fh.write("# made by tools/outside/shapes.py write_frustum_obj\n")
        for p in V:
            fh.write("v %.9f %.9f %.9f\n" % tuple(p))
        for t in F:
            fh.write("f %d %d %d\n" % tuple(t + 1))
    return path
