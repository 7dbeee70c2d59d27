#!/usr/bin/env python3
"""Generate a GoogleTest source that checks src/nvml/nvml_api.h against an
independent translation of a real nvml.h: bindings.rs of the Debian crate
nvml-wrapper-sys (bindgen output).

For every struct/union, enum, constant and function that nvml_api.h declares,
the expected ABI facts are computed here from the Rust declarations
(repr(C) layout rules: each field at the next multiple of its alignment, the
size rounded up to the largest alignment; a union is as large as its largest
member) and written into the test as literals; the test compares them with
sizeof / offsetof / values / function-pointer types of the C++ header.

Declarations the reference does not have (newer NVML than the bindings)
must be listed in newer_than_reference.txt, optionally as "NAME = ALIAS" to
check NAME against the reference's ALIAS (e.g. a renamed function).

Usage: gen_abi_expectations.py --bindings RS --header nvml_api.h
                               --newer newer_than_reference.txt --out TEST_CC
A missing bindings file gives a test that fails and names the package to
install (--package): the cross-check is never silently left out.
"""

import argparse
import os
import re
import sys

# Rust primitive -> (size, align, description) on x86-64 Linux (LP64, char
# signed).
PRIMITIVES = {
    "raw::c_char": (1, 1, "i1"), "raw::c_schar": (1, 1, "i1"),
    "raw::c_uchar": (1, 1, "u1"), "raw::c_short": (2, 2, "i2"),
    "raw::c_ushort": (2, 2, "u2"), "raw::c_int": (4, 4, "i4"),
    "raw::c_uint": (4, 4, "u4"), "raw::c_long": (8, 8, "i8"),
    "raw::c_ulong": (8, 8, "u8"), "raw::c_longlong": (8, 8, "i8"),
    "raw::c_ulonglong": (8, 8, "u8"), "raw::c_float": (4, 4, "f4"),
    "raw::c_double": (8, 8, "f8"),
    "i8": (1, 1, "i1"), "u8": (1, 1, "u1"), "i16": (2, 2, "i2"),
    "u16": (2, 2, "u2"), "i32": (4, 4, "i4"), "u32": (4, 4, "u4"),
    "i64": (8, 8, "i8"), "u64": (8, 8, "u8"), "f32": (4, 4, "f4"),
    "f64": (8, 8, "f8"), "usize": (8, 8, "u8"), "isize": (8, 8, "i8"),
}


def split_top_level(text, sep=","):
    """Split on `sep` outside brackets/parentheses/angle brackets."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "[(<":
            depth += 1
        elif ch in "])>":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


class Reference:
    """The declarations of bindings.rs that the checks need."""

    def __init__(self, text):
        self.aliases = {}
        for m in re.finditer(r"pub type (\w+) = ([^;]+);", text):
            self.aliases[m.group(1)] = " ".join(m.group(2).split())
        for m in re.finditer(r"pub use self::(\w+) as (\w+);", text):
            self.aliases[m.group(2)] = m.group(1)
        self.records = {}  # name -> (kind, [(field, type)])
        for m in re.finditer(r"pub (struct|union) (\w+) \{(.*?)\n\}", text, re.S):
            fields = []
            for item in split_top_level(m.group(3)):
                fm = re.match(r"(?:pub\s+)?(\w+)\s*:\s*(.+)$", item, re.S)
                if fm:
                    fields.append((fm.group(1), " ".join(fm.group(2).split())))
            self.records[m.group(2)] = (m.group(1), fields)
        self.constants = {}
        for m in re.finditer(r"pub const (\w+)\s*:\s*([\w:]+)\s*=\s*(-?\d+)\s*;", text):
            name, typ, value = m.group(1), m.group(2), int(m.group(3))
            self.constants.setdefault(name, value)
            # bindgen names enum constants <enum type>_<C name>.
            if name.startswith(typ + "_"):
                self.constants.setdefault(name[len(typ) + 1:], value)
        self.functions = {}
        for m in re.finditer(
                r"pub unsafe fn (nvml\w+)\(\s*&self,?(.*?)\)\s*(?:->\s*([^{]+?))?\s*\{",
                text, re.S):
            params = []
            for p in split_top_level(m.group(2)):
                params.append(" ".join(p.split(":", 1)[1].split()))
            ret = " ".join((m.group(3) or "()").split())
            self.functions[m.group(1)] = (params, ret)

    def resolve(self, t):
        seen = 0
        while t in self.aliases and seen < 20:
            t, seen = self.aliases[t], seen + 1
        return t

    def is_opaque(self, name):
        kind, fields = self.records[name]
        return all(f.startswith("_") for f, _ in fields)

    def layout(self, t):
        """(size, align, description) of a Rust type."""
        t = t.strip()
        m = re.match(r"\*(?:mut|const)\s+(.+)$", t)
        if m:
            return 8, 8, "p->" + self.pointee(m.group(1))
        m = re.match(r"\[(.+);\s*(\d+)usize\]$", t)
        if m:
            size, align, desc = self.layout(m.group(1))
            n = int(m.group(2))
            return size * n, align, "[%d]%s" % (n, desc)
        if t in PRIMITIVES:
            return PRIMITIVES[t]
        r = self.resolve(t)
        if r != t:
            return self.layout(r)
        if t in self.records:
            size, align, _ = self.record_layout(t)
            return size, align, "S%d" % size
        raise KeyError("unknown type in bindings: " + t)

    def pointee(self, t):
        t = t.strip()
        if t in ("raw::c_void", "c_void", "std::os::raw::c_void"):
            return "void"
        r = self.resolve(t)
        if r in self.records and self.is_opaque(r):
            return "opaque"
        if r != t:
            return self.pointee(r)
        return self.layout(t)[2]

    def record_layout(self, name):
        """(size, align, [(field, offset, description)])"""
        kind, fields = self.records[name]
        offset, max_align, size, out = 0, 1, 0, []
        for fname, ftype in fields:
            fsize, falign, fdesc = self.layout(ftype)
            max_align = max(max_align, falign)
            if kind == "union":
                out.append((fname, 0, fdesc))
                size = max(size, fsize)
            else:
                offset = (offset + falign - 1) // falign * falign
                out.append((fname, offset, fdesc))
                offset += fsize
                size = offset
        size = (size + max_align - 1) // max_align * max_align
        return size, max_align, out

    def function_signature(self, name):
        params, ret = self.functions[name]
        ret_desc = "void" if ret == "()" else self.layout(ret)[2]
        return "%s(%s)" % (ret_desc, ",".join(self.layout(p)[2] for p in params))


class ProjectHeader:
    """What nvml_api.h declares (parsed loosely; the compiler checks the rest)."""

    def __init__(self, text):
        text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
        self.records = []  # (tag, typedef name)
        for m in re.finditer(r"typedef\s+(?:struct|union)\s+(\w+)\s*\{.*?\}\s*(\w+)\s*;",
                             text, re.S):
            self.records.append((m.group(1), m.group(2)))
        self.enums = []  # typedef names
        self.constants = []
        for m in re.finditer(r"typedef\s+enum\s+(\w+)\s*\{(.*?)\}\s*(\w+)\s*;", text, re.S):
            self.enums.append(m.group(3))
            for item in split_top_level(m.group(2)):
                self.constants.append(item.split("=")[0].strip())
        for m in re.finditer(r"^#define\s+((?:NVML|nvml)\w*)[ \t]+\S", text, re.M):
            self.constants.append(m.group(1))
        self.typedefs = sorted(set(re.findall(r"\b(nvml\w+_t)\b", text)))
        self.functions = []
        for macro in ("GD_NVML_FUNCTIONS", "GD_NVML_OTHER_FUNCTIONS"):
            body = re.search(r"#define " + macro + r"\(X\)(.*?)\n\s*\n", text, re.S)
            if body:
                self.functions += re.findall(r"X\((nvml\w+),", body.group(1))
        self.functions.append("nvmlErrorString")


def read_newer(path):
    """NAME or NAME = ALIAS lines; '#' comments."""
    newer = {}
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            name, _, alias = (x.strip() for x in line.partition("="))
            newer[name] = alias or None
    return newer


def c_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def generate(ref, hdr, newer, bindings_path):
    out = []
    w = out.append
    w("// GENERATED at build time by tests/nvml/gen_abi_expectations.py from")
    w("// %s. Do not edit." % bindings_path)
    w('#include <gtest/gtest.h>\n')
    w('#include "nvml/nvml_api.h"')
    w('#include "abi_describe.h"\n')
    w("namespace {\n")
    unchecked = []  # declared by the project, unknown to the reference

    # Structs and unions: size, then each reference field's offset and type.
    for tag, name in hdr.records:
        if tag not in ref.records:
            if tag not in newer:
                unchecked.append(tag)
            continue
        size, _, fields = ref.record_layout(tag)
        w("TEST(NvmlApiMatchesReference, LayoutOf_%s) {" % name)
        w("  EXPECT_EQ(sizeof(%s), %du) << \"size of %s\";" % (name, size, name))
        for fname, offset, desc in fields:
            w("  {")
            w("    const gd_abi::FieldFacts f = GD_ABI_FIELD(%s, %s);" % (name, fname))
            w("    EXPECT_TRUE(f.present) << \"%s has no field %s\";" % (name, fname))
            w("    EXPECT_EQ(f.offset, %du) << \"offset of %s.%s\";" % (offset, name, fname))
            w("    EXPECT_EQ(f.type, %s) << \"type of %s.%s\";" % (c_string(desc), name, fname))
            w("  }")
        w("}\n")

    # Typedefs (enums, handles, structs) by their C name.
    w("TEST(NvmlApiMatchesReference, TypedefsHaveTheReferenceRepresentation) {")
    for t in hdr.typedefs:
        if t.endswith("_fn"):
            continue
        try:
            desc = ref.layout(t)[2]
        except KeyError:
            if t not in newer:
                unchecked.append(t)
            continue
        w("  EXPECT_EQ(gd_abi::describe<%s>(), %s) << \"%s\";" % (t, c_string(desc), t))
    w("}\n")

    # Constants and enumerators by value.
    w("TEST(NvmlApiMatchesReference, ConstantsHaveTheReferenceValues) {")
    for c in hdr.constants:
        if c in ref.constants:
            w("  EXPECT_EQ(static_cast<long long>(%s), %dLL) << \"%s\";" %
              (c, ref.constants[c], c))
        elif re.fullmatch(r"nvml\w+_v\d+", c) and c + "_st" in ref.records:
            # A versioned struct's version: sizeof(struct) | version << 24.
            ver = int(c.rsplit("_v", 1)[1])
            size = ref.record_layout(c + "_st")[0]
            w("  EXPECT_EQ(static_cast<long long>(%s), %dLL)"
              " << \"%s = sizeof(%s_t) | %d << 24\";" % (c, size | (ver << 24), c, c, ver))
        elif c not in newer:
            unchecked.append(c)
    w("}\n")

    # Function pointer typedefs: return and parameter types.
    w("TEST(NvmlApiMatchesReference, FunctionSignaturesMatchTheReference) {")
    for fn in hdr.functions:
        ref_name = fn if fn in ref.functions else newer.get(fn)
        if ref_name not in ref.functions:
            if fn not in newer:
                unchecked.append(fn)
            continue
        w("  EXPECT_EQ(gd_abi::describe_function<%s_fn>(), %s) << \"%s\";" %
          (fn, c_string(ref.function_signature(ref_name)), fn +
           ("" if ref_name == fn else " (checked as " + ref_name + ")")))
    w("}\n")

    # Anything declared but neither in the reference nor marked newer.
    w("TEST(NvmlApiMatchesReference, EveryDeclarationIsCheckedOrMarkedNewer) {")
    for name in unchecked:
        w("  ADD_FAILURE() << \"%s is declared in nvml_api.h but is not in the "
          "reference bindings; list it in tests/nvml/newer_than_reference.txt if "
          "it is newer NVML\";" % name)
    w("  SUCCEED();")
    w("}\n")
    w("}  // namespace")
    return "\n".join(out) + "\n"


def generate_missing(bindings_path, package):
    return (
        "// GENERATED by tests/nvml/gen_abi_expectations.py: reference missing.\n"
        "#include <gtest/gtest.h>\n\n"
        "TEST(NvmlApiMatchesReference, ReferenceBindingsAvailable) {\n"
        "  FAIL() << \"reference %s not found: install the Debian package "
        "%s and re-run cmake; nvml_api.h is not cross-checked\";\n"
        "}\n" % (bindings_path, package))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bindings", required=True)
    ap.add_argument("--header", required=True)
    ap.add_argument("--newer", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--package", default="librust-nvml-wrapper-sys-dev",
                    help="what to install when --bindings is missing")
    a = ap.parse_args()
    if os.path.exists(a.bindings):
        with open(a.bindings) as f:
            ref = Reference(f.read())
        with open(a.header) as f:
            hdr = ProjectHeader(f.read())
        text = generate(ref, hdr, read_newer(a.newer), a.bindings)
    else:
        text = generate_missing(a.bindings, a.package)
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
