"""How to_yaml.py writes values into a model file: YAML scalars and flow maps as the loader reads
them, and an export's SGD momentum."""
import json
import re


def flow(items):
    return "{" + ", ".join(f"{k}: {fmt(v)}" for k, v in items.items()) + "}"


def fmt(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, dict):
        return flow(v)
    if isinstance(v, list):
        return "[" + ", ".join(fmt(x) for x in v) + "]"
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, str):
        return json.dumps(v) if re.search(r"[:#{}\[\],&*?|<>=!%@`\"' ]", v) or not v else v
    return str(v)


def momentum_of(settings):
    """SGD's momentum of an export: recorded since the exporter wrote it, else 0.9, what
    steps.make_optimizer always used before."""
    return float(settings.get("momentum", 0.9))
