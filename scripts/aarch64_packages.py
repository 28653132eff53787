#!/usr/bin/python3
"""Prints the arm64 packages the aarch64 sysroot needs, one "name architecture version" a line.

The closure of the given root packages over Depends and Pre-Depends, as apt would install it on an
arm64 machine: in an alternative ("a | b") the first package, unless another one is already in the
closure; a virtual package by its first provider; the dependencies of architecture-independent
packages as arm64 ones. `apt-cache depends --recurse` would take every alternative (OpenCV's
libblas.so.3 alone brings in five BLAS builds). Reads apt's package lists
through python3-apt; `apt-get update` with the arm64 architecture added must have run.

Usage: aarch64_packages.py [--exclude NAME ...] ROOT[:ARCH] ...   (ARCH defaults to arm64)
An excluded package is left out together with whatever only it needs.
"""
import argparse
import sys

import apt_pkg


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exclude", nargs="*", default=[], help="package names to leave out")
    parser.add_argument("roots", nargs="+", help="root packages, NAME or NAME:ARCH")
    args = parser.parse_args()

    apt_pkg.init()
    cache = apt_pkg.Cache(progress=None)
    policy = apt_pkg.DepCache(cache)
    excluded = set(args.exclude)

    def arm64(pkg):  # a dependency of an arch-all package names the host's package: take arm64's
        if pkg.architecture == "arm64":
            return pkg
        try:
            return cache[pkg.name, "arm64"]
        except KeyError:
            return pkg

    def lookup(spec):
        name, _, arch = spec.partition(":")
        try:
            return cache[name, arch or "arm64"]
        except KeyError:
            sys.exit(f"aarch64_packages: no package {spec} in apt's lists (run apt-get update)")

    chosen = {}  # (name, arch) -> candidate version
    todo = [lookup(r) for r in args.roots]
    while todo:
        pkg = todo.pop()
        key = (pkg.name, pkg.architecture)
        if key in chosen or pkg.name in excluded:
            continue
        version = policy.get_candidate_ver(pkg)
        if version is None:  # a virtual package: its first provider
            if not pkg.provides_list:
                sys.exit(f"aarch64_packages: nothing provides {pkg.name}:{pkg.architecture}")
            todo.append(pkg.provides_list[0][2].parent_pkg)
            continue
        chosen[key] = version
        for kind in ("PreDepends", "Depends"):
            for alternatives in version.depends_list.get(kind, []):
                targets = [arm64(d.target_pkg) for d in alternatives]
                already = [t for t in targets if (t.name, t.architecture) in chosen]
                todo.append(already[0] if already else targets[0])

    for (name, _), version in sorted(chosen.items()):
        print(name, version.arch, version.ver_str)


if __name__ == "__main__":
    main()
