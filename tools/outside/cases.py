"""The outside validation cases: what each one is, in gradsim's frame (y up, metres, kg, s, N).

A case's `start` is the body's (x, z) on the floor and its yaw; the generator puts the centre of
mass at the geometric rest height (or at `drop_height` for a dropped body). `push` is one constant
force [N, world] at `point` [m, body frame from the COM] over [start, start + duration] s.
`camera` is "eye/at" or "opencv" (see make_cases.camera_for). `determines` is what the video
determines in principle (see README.md).
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
FRUSTUM = os.path.join(HERE, "frustum.obj")


def push(fx, fz=0.0, start=0.1, duration=0.3, point=(0, 0, 0), fy=0.0):
    return [dict(force=[fx, fy, fz], point=list(point), start=start, duration=duration)]


CASES = [
    dict(name="box-light-mujoco", shape=("box", [0.30, 0.20, 0.24]), engine="mujoco", mass=0.3, mu=0.4,
         impulses=push(2.5), start=(-0.35, 0.0, 0.0), camera="opencv", size=(160, 120), seconds=1.6,
         colour=(0.75, 0.22, 0.12), determines="mass and mu",
         notes="A light box pushed at its centre of mass: slides while pushed, then friction stops it."),
    dict(name="box-heavy-pybullet", shape=("box", [0.36, 0.24, 0.28]), engine="pybullet", mass=10.0, mu=0.3,
         impulses=push(50.0, duration=0.4), start=(-0.3, 0.0, 0.0), camera="eye/at", size=(160, 120), seconds=1.6,
         colour=(0.15, 0.35, 0.7), determines="mass and mu",
         notes="A heavy box pushed at its centre of mass."),
    dict(name="box-slippery-mujoco", shape=("box", [0.28, 0.18, 0.22]), engine="mujoco", mass=2.0, mu=0.1,
         impulses=push(6.0), start=(-0.3, 0.05, 0.0), camera="eye/at", size=(160, 120), seconds=1.5,
         colour=(0.2, 0.6, 0.25), determines="mass and mu",
         notes="Low friction: the box coasts about twice as far after the push as during it."),
    dict(name="box-launched-pybullet", shape=("box", [0.30, 0.20, 0.25]), engine="pybullet", mass=1.5, mu=0.2,
         impulses=[], velocity=[1.1, 0.0, 0.25], start=(-0.4, -0.05, 20.0), camera="opencv", size=(160, 120), seconds=1.2,
         colour=(0.8, 0.6, 0.1), determines="mu only",
         notes="No push: launched at a known velocity (initialState.velocity), it slides to rest; "
               "the deceleration μg does not involve the mass, so only μ is determined."),
    dict(name="box-spun-pybullet", shape=("box", [0.32, 0.22, 0.26]), engine="pybullet", mass=0.7, mu=0.8,
         impulses=push(10.0, duration=0.25, point=(0.0, 0.0, 0.08)), start=(-0.3, 0.0, 30.0), camera="opencv", size=(192, 144), seconds=1.5,
         colour=(0.55, 0.2, 0.6), determines="mass and mu",
         notes="Yawed 30° and pushed off its centre of mass (body point [0, 0, 0.08]): it slides and turns."),
    dict(name="box-diagonal-mujoco", shape=("box", [0.34, 0.20, 0.26]), engine="mujoco", mass=2.5, mu=0.5,
         impulses=push(16.0, fz=9.0, duration=0.4), start=(-0.3, -0.15, 0.0), camera="eye/at", size=(160, 120), seconds=1.5,
         colour=(0.8, 0.35, 0.1), determines="mass and mu",
         notes="Pushed diagonally across the floor (force [16, 0, 9] N), 2.5 kg as in issue 60."),
    dict(name="cylinder-mujoco", shape=("cylinder", 0.10, 0.26), engine="mujoco", mass=4.0, mu=0.6,
         impulses=push(35.0, duration=0.35), start=(-0.3, 0.0, 0.0), camera="opencv", size=(160, 120), seconds=1.4,
         colour=(0.1, 0.45, 0.55), determines="mass and mu",
         notes="An upright cylinder (axis y) pushed at its centre of mass; slides on its flat base."),
    dict(name="cylinder-pybullet", shape=("cylinder", 0.09, 0.20), engine="pybullet", mass=0.8, mu=0.25,
         impulses=push(4.0), start=(-0.3, 0.0, 0.0), camera="eye/at", size=(160, 120), seconds=1.5,
         colour=(0.7, 0.15, 0.3), determines="mass and mu",
         notes="An upright cylinder pushed at its centre of mass."),
    dict(name="sphere-rolling-mujoco", shape=("sphere", 0.10), engine="mujoco", mass=1.0, mu=0.5,
         impulses=push(1.5), start=(-0.4, 0.0, 0.0), camera="opencv", size=(160, 120), seconds=1.5,
         colour=(0.85, 0.45, 0.1), determines="mass only",
         notes="A ball pushed at its centre rolls without slipping (friction needed 2F/7 = 0.43 N < μmg = 4.9 N): "
               "a = 5F/(7m) gives the mass; μ never acts at its limit, so it is not determined. "
               "No rolling resistance: it keeps rolling at the end. gradsim's \"sphere\" is a smooth ball."),
    dict(name="sphere-bounce-pybullet", shape=("sphere", 0.08), engine="pybullet", mass=0.5, mu=0.4, restitution=0.6,
         impulses=push(1.0, start=0.05, duration=0.2), start=(-0.3, 0.0, 0.0), drop_height=0.6, camera="eye/at", size=(160, 120), seconds=1.5,
         colour=(0.1, 0.35, 0.9), determines="mass (mu only weakly)",
         notes="Dropped from rest with its centre 0.6 m above the floor, pushed sideways while in the air (before it lands "
               "at 0.33 s), then bounces (Bullet restitution 0.6 = body 0.6 × floor 1.0) and skids into rolling. "
               "The push in free flight gives the mass; μ shows only in the short skid after each landing."),
    dict(name="tall-box-tips-pybullet", shape=("box", [0.12, 0.40, 0.12]), engine="pybullet", mass=2.0, mu=0.8,
         impulses=push(10.0, duration=0.2, point=(0.0, 0.15, 0.0)), start=(-0.25, 0.0, 0.0), camera="opencv", size=(160, 120), seconds=1.5,
         colour=(0.85, 0.5, 0.05), determines="mass (mu not: the base does not slide)",
         notes="A tall box pushed 0.15 m above its centre of mass tips over onto its side."),
    dict(name="tall-box-tips-mujoco", shape=("box", [0.14, 0.36, 0.10]), engine="mujoco", mass=6.0, mu=0.7,
         impulses=push(30.0, duration=0.2, point=(0.0, 0.14, 0.0)), start=(-0.2, 0.0, 0.0), camera="eye/at", size=(160, 120), seconds=1.5,
         colour=(0.3, 0.3, 0.75), determines="mass (mu not: the base does not slide)",
         notes="A tall box pushed 0.14 m above its centre of mass tips over onto its side."),
    dict(name="mesh-frustum-mujoco", shape=("mesh",), engine="mujoco", mass=3.0, mu=0.35,
         impulses=push(20.0, duration=0.35), start=(-0.3, 0.0, 0.0), camera="opencv", size=(192, 144), seconds=1.5,
         colour=(0.75, 0.3, 0.25), determines="mass and mu",
         notes="A truncated pyramid from frustum.obj (committed beside the scene), pushed at its centre of mass."),
    dict(name="mesh-frustum-pybullet", shape=("mesh",), engine="pybullet", mass=6.0, mu=0.7,
         impulses=push(60.0), start=(-0.3, 0.0, 45.0), camera="eye/at", size=(160, 120), seconds=1.4,
         colour=(0.05, 0.6, 0.2), determines="mass and mu",
         notes="The same frustum yawed 45°, heavier and on a rougher floor."),
    dict(name="box-cycles-mujoco", shape=("box", [0.32, 0.20, 0.26]), engine="mujoco", renderer="blender", mass=1.2, mu=0.45,
         impulses=push(9.0, duration=0.35), start=(-0.3, 0.0, 10.0), camera="opencv", size=(160, 120), seconds=1.5,
         colour=(0.8, 0.12, 0.08), determines="mass and mu",
         notes="Rendered by Blender Cycles instead of POV-Ray: a box pushed at its centre of mass."),
    dict(name="cylinder-cycles-pybullet", shape=("cylinder", 0.11, 0.24), engine="pybullet", renderer="blender", mass=8.0, mu=0.55,
         impulses=push(65.0, duration=0.35), start=(-0.3, 0.0, 0.0), camera="eye/at", size=(160, 120), seconds=1.5,
         colour=(0.1, 0.3, 0.85), determines="mass and mu",
         notes="Rendered by Blender Cycles instead of POV-Ray: a heavy upright cylinder pushed at its centre of mass."),
    dict(name="box-resting-mujoco", shape=("box", [0.30, 0.22, 0.26]), engine="mujoco", mass=5.0, mu=0.5,
         impulses=[], start=(0.0, 0.0, 15.0), camera="eye/at", size=(160, 120), seconds=1.0,
         colour=(0.6, 0.25, 0.15), determines="neither",
         notes="A control: a box resting on the floor the whole clip. Nothing moves, so neither mass nor μ is determined; "
               "a fit should say so, not report a number."),
]

# Held out: made on 2026-12-07, after the fit's defaults and the verdict's method (alternatives, profile) were settled
# on the cases above, and fitted once with them — nothing was tuned on these. Written to
# examples/data/outside-held-out/ (make_cases.py --held-out).
HELD_OUT = [
    dict(name="box-toward-camera-mujoco", shape=("box", [0.26, 0.18, 0.22]), engine="mujoco", mass=1.5, mu=0.35,
         impulses=push(0.0, fz=-10.0), start=(0.0, 0.25, 0.0), camera="eye/at", size=(160, 120), seconds=1.5,
         colour=(0.7, 0.55, 0.1), determines="mass and mu",
         notes="Pushed straight towards the camera (force [0, 0, -10] N): the motion is mostly in depth."),
    dict(name="cylinder-light-mujoco", shape=("cylinder", 0.07, 0.18), engine="mujoco", mass=0.4, mu=0.7,
         impulses=push(4.5), start=(-0.3, 0.0, 0.0), camera="opencv", size=(160, 120), seconds=1.4,
         colour=(0.2, 0.5, 0.2), determines="mass and mu",
         notes="A small, light upright cylinder on a rough floor, pushed at its centre of mass."),
    dict(name="mesh-frustum-slippery-pybullet", shape=("mesh",), engine="pybullet", mass=1.0, mu=0.15,
         impulses=push(3.5, duration=0.25), start=(-0.3, 0.0, 20.0), camera="eye/at", size=(160, 120), seconds=1.5,
         colour=(0.1, 0.55, 0.75), determines="mass and mu",
         notes="The frustum of frustum.obj yawed 20° on a slippery floor, pushed at its centre of mass."),
    dict(name="box-turning-mujoco", shape=("box", [0.30, 0.20, 0.24]), engine="mujoco", mass=2.0, mu=0.5,
         impulses=push(14.0, point=(0.0, 0.0, 0.1)), start=(-0.3, 0.0, 0.0), camera="opencv", size=(160, 120),
         seconds=1.5, colour=(0.15, 0.4, 0.75), determines="mass and mu",
         notes="Pushed 0.1 m off its centre of mass (body point [0, 0, 0.1]): it slides and turns, as the spun box."),
    dict(name="box-cycles-pybullet", shape=("box", [0.30, 0.20, 0.24]), engine="pybullet", renderer="blender",
         mass=5.0, mu=0.45, impulses=push(35.0, duration=0.35), start=(-0.3, 0.0, -15.0), camera="eye/at",
         size=(160, 120), seconds=1.5, colour=(0.75, 0.45, 0.1), determines="mass and mu",
         notes="Rendered by Blender Cycles: a box yawed −15° pushed at its centre of mass."),
]
