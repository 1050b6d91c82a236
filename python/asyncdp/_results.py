"""Building result dataclasses from the CLI's JSON objects (shared by accounting.py and training.py)."""

import dataclasses


def from_json(cls, obj, convert=None):
    """An instance of dataclass ``cls`` from a JSON object: each key that names a field fills it (through
    ``convert[key]`` when given), any other key goes to ``extra``, and the object itself to ``json``."""
    convert = convert or {}
    names = {f.name for f in dataclasses.fields(cls)} - {"extra", "json"}
    known, extra = {}, {}
    for key, value in obj.items():
        if key in names:
            known[key] = convert[key](value) if key in convert and value is not None else value
        else:
            extra[key] = value
    return cls(**known, extra=extra, json=obj)


def compact_repr(self):
    """Like the dataclass repr, without the fields that are None or empty (a calibration has no ``sigma``
    at the top, an RDP section no ``mu``, ...) and without the raw ``json``."""
    parts = []
    for f in dataclasses.fields(self):
        if not f.repr:
            continue
        value = getattr(self, f.name)
        if value is None or (f.name == "extra" and not value):
            continue
        parts.append(f"{f.name}={value!r}")
    return f"{type(self).__name__}({', '.join(parts)})"
