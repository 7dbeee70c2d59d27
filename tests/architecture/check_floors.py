#!/usr/bin/env python3
"""Holds every #include under src/ to the floors, and the docs to them.

Each module may include its own headers and those of the modules the table
below allows, nothing else. A module's floor is one above the highest floor
it may include, so nothing includes upward or sideways by construction.
    check_floors.py SRC_DIR [--doc docs/architecture.md]   check (and the doc)
    check_floors.py SRC_DIR --draw                  print the doc's picture
The picture of docs/architecture.md ("How it is built", between the floors
markers) is drawn from this table, so the two cannot differ. --readme is
the old name of --doc and still accepted.
"""
import pathlib
import re
import sys

# module -> (the modules of ours it may include besides itself, what it is).
TABLE = {
    "common": (set(), "durations, sizes, ASCII and terminal-safe text, "
               "bounded JSON"),
    "model": ({"common"}, "sample.h (docs/trace-format.md), process_tree.h"),
    "nvml": ({"common", "model"}, "GpuSource: NVML through dlopen"),
    "procfs": ({"common", "model"}, "HostSource: /proc, /sys, the process "
               "table"),
    "kernellog": ({"common", "model"}, "Xid, OOM, AER lines of the kernel "
                  "log"),
    "trace": ({"common", "model"}, "samples as JSONL (+zstd), read and "
              "written"),
    "slurm": ({"common", "model"}, "Slurm: jobs' names from scontrol, "
              "with a deadline and a cache"),
    "cuda": ({"common", "model"}, "the CUDA driver API and NCCL through "
             "dlopen (burn)"),
    # Kubernetes as a source; the gRPC client is its own shared library,
    # loaded with dlopen (pods_plugin_abi.h).
    "pods": ({"common"}, "Kubernetes: pods from the kubelet and the "
             "container runtime (gRPC in libgpudoctor-pods.so, dlopen)"),
    "http_client": ({"common"}, "the one HTTP client and URL parser "
                    "(deadlines, TLS, auth, size bounds)"),
    # A fleet's Prometheus as a source: its series as the model's samples.
    "promsource": ({"common", "model", "http_client"}, "a fleet's "
                   "Prometheus as samples: series table, node join"),
    "collect": ({"common", "model", "nvml", "procfs", "kernellog", "slurm",
                 "pods"},
                "the Sampler: joins the sources into one Sample"),
    "diagnose": ({"common", "model", "trace"}, "the rules, one per file, "
                 "one table"),
    "checklist": ({"common", "model"}, "static checks, one per file"),
    # check: the health gate; diagnose's one-sample rules and its own
    # judges, on the Sampler's one sample and procmgmt's device holders.
    "check": ({"common", "model", "trace", "collect", "diagnose", "procmgmt"},
              "the health gate of a prolog: one sample judged"),
    "accounting": ({"common", "model"}, "GPU-hours and energy per job, user, "
                   "container and GPU (report)"),
    "procmgmt": ({"common", "model", "procfs"}, "who, kill sessions, "
                 "watch-leak, ps --tree data"),
    "exporter": ({"common", "model"}, "Prometheus text of /metrics"),
    "store": ({"common", "model", "trace"}, "the SQLite history"),
    # burn drives the GPUs through cuda, watches them through collect and
    # runs the diagnosis over its window.
    "burn": ({"common", "model", "trace", "cuda", "collect", "diagnose"},
             "GPU stress tests, kernels, verdicts"),
    # serve's wire format: each message's writer beside its reader.
    "api": ({"common", "model", "trace", "diagnose", "procmgmt"}, "serve's API "
            "messages, each writer beside its reader"),
    # serve composes consumers through their public headers (procmgmt: the
    # remote kill runs its plan and session; monitor and promsource: the
    # fleet feed of --fleet-prometheus, its rows as top's fleet screen has
    # them, and its nodes' serve addresses; monitor includes no serve).
    "serve": ({"common", "model", "trace", "collect", "diagnose", "exporter",
               "store", "procmgmt", "api", "http_client", "accounting",
               "monitor", "promsource"},
              "the daemon: sampling loop, HTTP API, alerting"),
    # top's data: feeds (live, replay, remote, a fleet's Prometheus), window
    # diagnosis, kill jobs.
    "monitor": ({"common", "model", "trace", "collect", "diagnose",
                 "procmgmt", "api", "http_client", "promsource", "check"},
                "top's data: feeds, window diagnosis, kill jobs"),
    "views": ({"common", "model", "diagnose", "checklist", "check", "procmgmt",
               "burn", "monitor", "api", "accounting"},
              "terminal text and command JSON; views/top/: top's screen"),
    "cli": ({"common", "model", "trace", "procfs", "slurm", "collect",
             "diagnose", "accounting", "check",
             "checklist", "procmgmt", "exporter", "store", "serve", "burn",
             "monitor", "views", "api", "http_client", "promsource"},
            "one thin cmd_<name>.cc per command: flags -> module -> view"),
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]+"', re.M)
BEGIN, END = "<!-- floors: begin -->", "<!-- floors: end -->"


def floors(modules):
    """module -> floor, for the modules present; raises on a cycle."""
    out, busy = {}, set()

    def floor(m):
        if m in out:
            return out[m]
        if m in busy:
            raise SystemExit(f"floors table: {m} is part of a cycle")
        busy.add(m)
        below = [floor(d) for d in TABLE[m][0] if d in modules]
        out[m] = 1 + max(below, default=-1)
        return out[m]

    for m in modules:
        floor(m)
    return out


def draw(modules):
    levels = floors(modules)
    width = max(len(m) for m in modules) + 2
    lines = ["```"]
    for level in sorted(set(levels.values()), reverse=True):
        for i, m in enumerate(sorted(x for x in modules if levels[x] == level)):
            head = f"floor {level}" if i == 0 else ""
            lines.append(f"{head:<8} {('src/' + m + '/'):<{width + 5}}"
                         f"{TABLE[m][1]}")
            # common and model are below everything; name the rest.
            below = sorted(d for d in TABLE[m][0]
                           if d in modules and d not in ("common", "model"))
            indent = " " * (9 + width + 5)
            words = "includes " + ", ".join(below)
            while below and words:
                cut = words.rfind(" ", 0, 78 - len(indent)) \
                    if len(indent) + len(words) > 78 else len(words)
                lines.append(indent + words[:cut].rstrip())
                words = "  " + words[cut:].strip() if words[cut:].strip() \
                    else ""
    lines.append("every module above floor 1 may include common/ and model/")
    lines.append("```")
    return "\n".join(lines)


def check_includes(src, modules):
    errors = []
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".cc", ".h"):
            continue
        module = path.relative_to(src).parts[0]
        allowed = TABLE.get(module, (set(), ""))[0] | {module}
        text = path.read_text(errors="replace")
        for m in INCLUDE.finditer(text):
            target = m.group(1)
            if target in modules and target not in allowed:
                line = text.count("\n", 0, m.start()) + 1
                errors.append(f"{path.relative_to(src.parent)}:{line}: "
                              f"{module} includes {target}/ (not below it)")
    return errors


def check_doc(doc, picture):
    text = pathlib.Path(doc).read_text()
    if BEGIN not in text or END not in text:
        return [f"{doc}: no {BEGIN} ... {END} block"]
    block = text.split(BEGIN, 1)[1].split(END, 1)[0].strip()
    if block != picture:
        return [f"{doc}: the floors picture differs from the table; "
                f"paste the output of check_floors.py SRC --draw:\n{picture}"]
    return []


def main():
    src = pathlib.Path(sys.argv[1])
    modules = {p.name for p in src.iterdir() if p.is_dir()}
    errors = [f"src/{m}/ is a module the floors table does not place"
              for m in sorted(modules - TABLE.keys())]
    if errors:
        print("\n".join(errors))
        sys.exit(1)
    if "--draw" in sys.argv:
        print(draw(modules))
        return
    errors = check_includes(src, modules)
    flag = next((f for f in ("--doc", "--readme") if f in sys.argv), None)
    if flag:
        errors += check_doc(sys.argv[sys.argv.index(flag) + 1], draw(modules))
    for e in errors:
        print(e)
    if errors:
        sys.exit(1)
    agrees = f", {sys.argv[sys.argv.index(flag) + 1]} agrees" if flag else ""
    print(f"floors: {len(modules)} modules on {max(floors(modules).values())}"
          f" floors, no upward or sideways include{agrees}")


if __name__ == "__main__":
    main()
