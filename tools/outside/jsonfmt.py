"""JSON written for people: objects indented, lists of numbers (and lists of such lists) on one line."""
import json


def _flat(v):
    """A list of numbers, or a short list (≤ 3, e.g. a rotation matrix) of such lists."""
    scalars = lambda l: all(not isinstance(x, (dict, list)) for x in l)
    return isinstance(v, list) and (scalars(v) or (len(v) <= 3 and all(isinstance(x, list) and scalars(x) for x in v)))


def dumps(v, indent=2, level=0):
    pad, inner = " " * (indent * level), " " * (indent * (level + 1))
    if isinstance(v, dict):
        if not v:
            return "{}"
        items = [f"{inner}{json.dumps(k)}: {dumps(x, indent, level + 1)}" for k, x in v.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(v, list) and not _flat(v):
        return "[\n" + ",\n".join(inner + dumps(x, indent, level + 1) for x in v) + "\n" + pad + "]"
    return json.dumps(v, ensure_ascii=False)


def dump(v, path):
    with open(path, "w") as f:
        f.write(dumps(v) + "\n")
