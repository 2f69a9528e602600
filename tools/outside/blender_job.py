"""Runs INSIDE Blender (3.x, Cycles): blender -b --factory-startup -P blender_job.py -- job.json

Renders the frames a job file lists. The job is written by render_blender.py in gradsim's frame
(y up); Blender is z up, so everything is turned by Mᵀ: (x, y, z)_gradsim ↦ (x, −z, y)_blender
(a proper rotation, as for the physics engines). The camera is the job's OpenCV pinhole:
Blender's camera looks down its −z with +y up, so its camera-to-world rotation is
Mᵀ · Rᵀ · diag(1, −1, −1); lens = fx · sensor_width / W with the sensor fitted horizontally;
shift_x = ((W − 1)/2 − cx)/W and shift_y = (cy − (H − 1)/2)/W move the principal point (Blender's
shifts are in units of the larger image side; W ≥ H here).
"""
import json
import sys

import bpy
import mathutils

job = json.load(open(sys.argv[sys.argv.index("--") + 1]))
MT = mathutils.Matrix(((1, 0, 0), (0, 0, -1), (0, 1, 0)))  # gradsim → Blender


def vec(v):
    return MT @ mathutils.Vector(v)


bpy.ops.wm.read_factory_settings(use_empty=True)
scene = bpy.context.scene
scene.render.engine = "CYCLES"
scene.cycles.device = "CPU"
scene.cycles.samples = job["samples"]
scene.cycles.use_denoising = False
scene.cycles.seed = 0
scene.cycles.use_animated_seed = True
scene.render.resolution_x, scene.render.resolution_y = job["width"], job["height"]
scene.render.resolution_percentage = 100
scene.render.pixel_aspect_x = scene.render.pixel_aspect_y = 1
scene.render.film_transparent = False
scene.render.filter_size = 1.0
scene.view_settings.view_transform = "Standard"
scene.render.image_settings.file_format = "PNG"
scene.render.image_settings.color_mode = "RGB"

world = bpy.data.worlds.new("world")
scene.world = world
world.use_nodes = True
world.node_tree.nodes["Background"].inputs[0].default_value = (0.35, 0.38, 0.45, 1)
world.node_tree.nodes["Background"].inputs[1].default_value = 0.25

# Camera.
K, R, t = job["K"], mathutils.Matrix(job["R"]), mathutils.Vector(job["t"])
W, H = job["width"], job["height"]
cam_data = bpy.data.cameras.new("cam")
cam_data.sensor_fit = "HORIZONTAL"
cam_data.sensor_width = 36.0
cam_data.lens = K["fx"] * 36.0 / W
cam_data.shift_x = ((W - 1) / 2 - K["cx"]) / W
cam_data.shift_y = (K["cy"] - (H - 1) / 2) / W
cam_data.clip_start, cam_data.clip_end = 0.05, 100
cam = bpy.data.objects.new("cam", cam_data)
scene.collection.objects.link(cam)
eye = -(R.transposed() @ t)
rot = MT @ R.transposed() @ mathutils.Matrix(((1, 0, 0), (0, -1, 0), (0, 0, -1)))
cam.matrix_world = mathutils.Matrix.Translation(vec(eye)) @ rot.to_4x4()
scene.camera = cam

BALLS = job.get("balls")  # the camera check: small glowing balls at known points on black, nothing else
if BALLS:
    world.node_tree.nodes["Background"].inputs[1].default_value = 0.0
    em = bpy.data.materials.new("glow")
    em.use_nodes = True
    out = em.node_tree.nodes["Material Output"]
    e = em.node_tree.nodes.new("ShaderNodeEmission")
    e.inputs["Strength"].default_value = 1.0
    em.node_tree.links.new(e.outputs["Emission"], out.inputs["Surface"])
    for p in BALLS["points"]:
        bpy.ops.mesh.primitive_uv_sphere_add(radius=BALLS["radius"], location=vec(p), segments=24, ring_count=12)
        bpy.context.active_object.data.materials.append(em)

# Lights: a soft area light and a dim fill that casts no shadow.
if BALLS:
    for f in job["frames"]:
        scene.render.filepath = f["out"]
        bpy.ops.render.render(write_still=True)
    sys.exit(0)
area = bpy.data.lights.new("key", "AREA")
area.shape, area.size, area.size_y = "RECTANGLE", 1.0, 0.6
area.energy = job.get("key_watts", 140)
area.color = (1.0, 0.96, 0.88)
key = bpy.data.objects.new("key", area)
key.location = vec([1.6, 3.2, -1.2])  # pointing straight down (Blender's −z)
scene.collection.objects.link(key)
fill = bpy.data.lights.new("fill", "SUN")
fill.energy = 0.3
fill.cycles.cast_shadow = False
fo = bpy.data.objects.new("fill", fill)
fo.rotation_euler = (0.9, 0.0, -2.4)
scene.collection.objects.link(fo)

# Floor: checkered 10 cm squares in world metres (Object coordinates of an unrotated plane at the origin).
bpy.ops.mesh.primitive_plane_add(size=40)
floor = bpy.context.active_object
fm = bpy.data.materials.new("floor")
fm.use_nodes = True
nt = fm.node_tree
bsdf = nt.nodes["Principled BSDF"]
bsdf.inputs["Roughness"].default_value = 0.7
bsdf.inputs["Specular"].default_value = 0.2
chk = nt.nodes.new("ShaderNodeTexChecker")
chk.inputs["Color1"].default_value = (0.62, 0.60, 0.56, 1)
chk.inputs["Color2"].default_value = (0.30, 0.30, 0.31, 1)
chk.inputs["Scale"].default_value = 5.0  # Blender's checker alternates every 1/(2·scale)... per unit: squares of 0.1 m
tc = nt.nodes.new("ShaderNodeTexCoord")
nt.links.new(tc.outputs["Object"], chk.inputs["Vector"])
nt.links.new(chk.outputs["Color"], bsdf.inputs["Base Color"])
floor.data.materials.append(fm)

# The body.
body = None
if job.get("body"):
    b = job["body"]
    verts = [tuple(vec(v)) for v in b["vertices"]]
    mesh = bpy.data.meshes.new("body")
    mesh.from_pydata(verts, [], [tuple(f) for f in b["faces"]])
    mesh.update()
    body = bpy.data.objects.new("body", mesh)
    scene.collection.objects.link(body)
    if b.get("smooth"):
        for poly in mesh.polygons:
            poly.use_smooth = True
    bm = bpy.data.materials.new("body")
    bm.use_nodes = True
    p = bm.node_tree.nodes["Principled BSDF"]
    p.inputs["Base Color"].default_value = (*b["colour"], 1)
    p.inputs["Roughness"].default_value = 0.45
    p.inputs["Specular"].default_value = 0.35
    mesh.materials.append(bm)

for f in job["frames"]:
    if body is not None:
        Rg = mathutils.Matrix(f["R"])
        body.matrix_world = mathutils.Matrix.Translation(vec(f["x"])) @ (MT @ Rg @ MT.transposed()).to_4x4()
    scene.frame_set(f.get("index", 0))
    scene.render.filepath = f["out"]
    bpy.ops.render.render(write_still=True)
