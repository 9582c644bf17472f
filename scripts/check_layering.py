"""Checks that every #include between folders of src/ goes down the library graph.

Each folder of src/ is one CMake library (CMakeLists.txt, wf_library) that links only the
libraries named for it below; a file may include headers of its own folder and of the folders
its library reaches through those links. An include that climbs (runtime -> backends, eval ->
backends, a backend -> cli) is a back-edge: this script names each one and exits 1. ctest runs it
(test `layering`); docs/architecture.md draws the same graph.

    python3 scripts/check_layering.py [SRC_DIR]
"""
import pathlib
import re
import sys

# What each library links directly (mirrors CMakeLists.txt and cmake/serve.cmake).
DEPENDS = {
    "support": [],
    "ir": ["support"],
    "stablehlo": ["ir"],
    "eval": ["ir"],
    "autodiff": ["ir"],
    "transforms": ["eval", "ir"],
    "dist": ["eval", "ir"],
    "runtime": ["transforms", "stablehlo", "ir"],
    "train": ["runtime", "dist", "transforms", "autodiff", "ir"],
    "backends/cpu": ["runtime", "dist", "eval"],
    "backends/cuda": ["runtime", "dist", "transforms", "eval"],
    "backends": ["backends/cpu", "backends/cuda"],
    "serve": ["runtime"],
    "capi": ["backends", "runtime"],
    "cli": ["serve", "backends", "runtime", "stablehlo", "autodiff", "train", "dist"],
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def reachable(library):
    seen, stack = set(), list(DEPENDS[library])
    while stack:
        lib = stack.pop()
        if lib not in seen:
            seen.add(lib)
            stack.extend(DEPENDS[lib])
    return seen


def library_of(relative):
    """The library a path under src/ belongs to: its folder, backends/<name> for a backend."""
    parts = relative.parts
    if parts[0] == "backends" and len(parts) > 2:
        return "backends/" + parts[1]
    return parts[0]


def main():
    src = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[1] / "src")
    violations = []
    checked = 0
    for path in sorted(src.rglob("*")):
        if path.suffix not in {".h", ".cpp", ".cu", ".cuh"}:
            continue
        library = library_of(path.relative_to(src))
        if library not in DEPENDS:
            violations.append(f"{path.relative_to(src)}: folder '{library}' is not in the library graph")
            continue
        allowed = reachable(library) | {library}
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            match = INCLUDE.match(line)
            if not match or not (src / match.group(1)).exists():
                continue  # a system or third-party header
            checked += 1
            target = library_of(pathlib.Path(match.group(1)))
            if target not in allowed:
                violations.append(f"{path.relative_to(src)}:{number}: {library} includes {match.group(1)} "
                                  f"({target}), which {library} does not link")
    for v in violations:
        print(v)
    print(f"layering: {checked} includes checked, {len(violations)} against the library graph")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
