"""Prints `name==version` for every installed package that a requirements file needs, directly or
through dependencies (extras followed), sorted: the body of requirements-lock.txt.

    python3 scripts/pip_closure.py requirements-dev.txt
"""
import importlib.metadata as metadata
import re
import sys

from packaging.requirements import Requirement


def _key(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def closure(requirements_file):
    pending = []
    with open(requirements_file) as f:
        for line in f:
            line = line.split("#")[0].strip()
            if line:
                req = Requirement(line)
                pending.append((req.name, set(req.extras)))
    found = {}  # key -> (name, version, extras followed)
    while pending:
        name, extras = pending.pop()
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            sys.exit(f"pip_closure: {name} is required but not installed")
        key = _key(dist.metadata["Name"])
        if key in found and extras <= found[key][2]:
            continue
        extras = extras | (found[key][2] if key in found else set())
        found[key] = (dist.metadata["Name"], dist.version, extras)
        for text in dist.requires or []:
            req = Requirement(text)
            wanted = req.marker is None or any(req.marker.evaluate({"extra": e}) for e in extras | {""})
            if wanted:
                pending.append((req.name, set(req.extras)))
    return [f"{name}=={version}" for name, version, _ in sorted(found.values(), key=lambda v: _key(v[0]))]


if __name__ == "__main__":
    print("\n".join(closure(sys.argv[1] if len(sys.argv) > 1 else "requirements-dev.txt")))
