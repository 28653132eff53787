#!/usr/bin/python3
"""Prints a Debian Depends field for ELF programs from the shared libraries they link.

Each NEEDED soname (readelf -d) is looked up in the shlibs files of the packages that ship the
libraries, as dpkg-shlibdeps does: a line "libfoo 3 libfoo3 (>= 1.2)" declares that a program
linking libfoo.so.3 (or libfoo-3.so) depends on "libfoo3 (>= 1.2)". The shlibs files come from
the host's dpkg database (--dpkg-db, for programs built for the host: each soname is resolved to
the library file the loader picks, `ldd`, and the package owning that file, `dpkg -S`, gives the
shlibs file, so a lib32 or foreign-architecture copy of a library never answers) or from the
control archives of a folder of .debs (--debs, e.g. the cached arm64 .debs of the aarch64 sysroot,
all of one architecture). A soname no package declares is an error (exit 1), never a silently
missing dependency.

Usage: deb_depends.py (--dpkg-db DIR | --debs DIR) PROGRAM ...
"""
import argparse
import glob
import os
import re
import subprocess
import sys


def needed(program):
    out = subprocess.run(["readelf", "-d", program], check=True, capture_output=True, text=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def parse_shlibs(text, table):
    for line in text.splitlines():
        fields = line.split(None, 2)
        if len(fields) < 3 or fields[0].startswith("#") or fields[0].endswith(":"):  # "udeb:" lines
            continue
        name, version, depends = fields
        for soname in (f"{name}.so.{version}", f"{name}-{version}.so"):
            table.setdefault(soname, depends.strip())


def shlibs_from_dpkg(db, programs):
    libraries = {}  # soname -> the file the loader picks
    for program in programs:
        ldd = subprocess.run(["ldd", program], check=True, capture_output=True, text=True).stdout
        libraries.update(re.findall(r"^\s*(\S+) => (/\S+)", ldd, flags=re.M))
    paths = sorted({p for path in libraries.values() for p in (path, os.path.realpath(path))})
    # One query for every path (each call reads the whole database); unowned paths only warn.
    out = subprocess.run(["dpkg-query", "--admindir", db, "-S", *paths], capture_output=True, text=True).stdout
    owner = {}
    for line in out.splitlines():
        package, _, path = line.partition(": ")
        owner[path] = package.split(",")[0].strip()
    table = {}
    for soname, path in libraries.items():
        package = owner.get(os.path.realpath(path)) or owner.get(path, "")
        for name in (package, package.split(":")[0]):
            shlibs = os.path.join(db, "info", name + ".shlibs")
            if name and os.path.exists(shlibs):
                found = {}
                with open(shlibs, encoding="utf-8") as f:
                    parse_shlibs(f.read(), found)
                if soname in found:
                    table[soname] = found[soname]
                    break
    return table


def shlibs_from_debs(folder):
    table = {}
    for deb in sorted(glob.glob(os.path.join(folder, "*.deb"))):
        control = subprocess.run(["dpkg-deb", "--ctrl-tarfile", deb], check=True, capture_output=True).stdout
        listing = subprocess.run(["tar", "-t"], input=control, check=True, capture_output=True).stdout.decode()
        if "./shlibs" not in listing.split():
            continue
        text = subprocess.run(["tar", "-xO", "./shlibs"], input=control, check=True, capture_output=True).stdout
        parse_shlibs(text.decode(), table)
    return table


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--dpkg-db", help="dpkg's database folder (/var/lib/dpkg)")
    source.add_argument("--debs", help="a folder of .deb files")
    parser.add_argument("programs", nargs="+")
    args = parser.parse_args()
    table = shlibs_from_dpkg(args.dpkg_db, args.programs) if args.dpkg_db else shlibs_from_debs(args.debs)
    depends, missing = [], []
    for program in args.programs:
        for soname in needed(program):
            if soname.startswith("ld-linux"):  # the dynamic loader comes with libc6
                continue
            if soname not in table:
                missing.append(f"{os.path.basename(program)}: {soname}")
            elif table[soname] not in depends:
                depends.append(table[soname])
    if missing:
        print("deb_depends: no package declares (shlibs) " + ", ".join(missing), file=sys.stderr)
        return 1
    print(", ".join(sorted(depends)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
