#!/usr/bin/env python3
"""Fails when a file under src/ includes upward or into a sibling consumer.

The floors are the README's ("How it is built"): a module may include its
own headers and those of the modules this table allows, nothing else.
    check_floors.py SRC_DIR
"""
import pathlib
import re
import sys

# module -> the modules of ours it may include (besides itself).
BELOW = {
    "common": set(),
    # The one HTTP client and URL parser (gpudoctor-full only).
    "http_client": {"common"},
    "model": {"common"},
    "nvml": {"common", "model"},
    "procfs": {"common", "model"},
    "kernellog": {"common", "model"},
    "trace": {"common", "model"},
    "cuda": {"common", "model"},
    "collect": {"common", "model", "nvml", "procfs", "kernellog"},
    "diagnose": {"common", "model", "trace"},
    "checklist": {"common", "model"},
    # http_client: ps's and diagnose's questions to serve (serve_history).
    "procmgmt": {"common", "model", "procfs", "http_client"},
    "exporter": {"common", "model"},
    "store": {"common", "model", "trace"},
    # serve composes consumers through their public headers (procmgmt: the
    # remote kill runs its plan and session).
    "serve": {"common", "model", "trace", "collect", "diagnose", "exporter",
              "store", "procmgmt", "http_client"},
    # burn drives the GPUs through cuda, watches them through collect and
    # runs the diagnosis over its window.
    "burn": {"common", "model", "trace", "cuda", "collect", "diagnose"},
    # top's data: feeds (live, replay, remote), window diagnosis, kill jobs.
    "monitor": {"common", "model", "trace", "collect", "diagnose",
                "procmgmt", "http_client"},
    "views": {"common", "model", "diagnose", "checklist", "procmgmt", "burn",
              "monitor"},
    "cli": {"common", "model", "trace", "procfs", "collect", "diagnose",
            "checklist", "procmgmt", "exporter", "store", "serve", "burn",
            "monitor",
            "views"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]+"', re.M)


def main():
    src = pathlib.Path(sys.argv[1])
    modules = {p.name for p in src.iterdir() if p.is_dir()}
    errors = [f"src/{m}/ is a module the floors table does not place"
              for m in sorted(modules - BELOW.keys())]
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".cc", ".h"):
            continue
        module = path.relative_to(src).parts[0]
        allowed = BELOW.get(module, set()) | {module}
        text = path.read_text(errors="replace")
        for m in INCLUDE.finditer(text):
            target = m.group(1)
            if target in modules and target not in allowed:
                line = text.count("\n", 0, m.start()) + 1
                errors.append(f"{path.relative_to(src.parent)}:{line}: "
                              f"{module} includes {target}/ (not below it)")
    for e in errors:
        print(e)
    if errors:
        sys.exit(1)
    print(f"floors: {len(modules)} modules, no upward or sideways include")


if __name__ == "__main__":
    main()
