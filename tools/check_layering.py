#!/usr/bin/env python3
# The layering check: every `#include "..."` in ir/, runtime/, interpreter/,
# passes/, jit/, capi/ and tools/ must point down (or sideways within its own
# folder) the dependency order of docs/architecture.md:
#
#   ir  <-  runtime/host  <-  interpreter  <-  passes  <-  runtime  <-  jit  <-  capi, tools
#
# A file may include a file of its own folder or of any folder to its left;
# capi/ and tools/ share the top rank but are separate (neither includes the
# other). "runtime" means runtime/ minus runtime/host/, which sits lower.
# Includes of anything outside these folders (absl/, asmjit/, system headers,
# a bare "name.h") are not ours to order and are ignored.
#
# Usage: check_layering.py [REPO_ROOT]   (default: the folder above this script)
# Prints one line per violation, `file:line: includes "path": rule`, and exits
# 1 if there is any, 0 otherwise. Standard library only, so it runs in CI and
# as the meson test `check_layering`.

import os
import re
import sys

# (layer, rank); the first prefix that matches a path names its layer, so the
# more specific runtime/host/ comes before runtime/.
LAYERS = [
    ("ir/", "ir", 0),
    ("runtime/host/", "runtime/host", 1),
    ("interpreter/", "interpreter", 2),
    ("passes/", "passes", 3),
    ("runtime/", "runtime", 4),
    ("jit/", "jit", 5),
    ("capi/", "capi", 6),
    ("tools/", "tools", 6),
]
ORDER = "ir <- runtime/host <- interpreter <- passes <- runtime <- jit <- capi, tools"
SCANNED_ROOTS = ["ir", "runtime", "interpreter", "passes", "jit", "capi", "tools"]
SOURCE_SUFFIXES = (".h", ".cc", ".c", ".cpp", ".inc")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def layer_of(path):
    """The (name, rank) of the layer a repository-relative path lies in, or None."""
    for prefix, name, rank in LAYERS:
        if path.startswith(prefix):
            return name, rank
    return None


def violations(root):
    """Yields one message per include that points up (or across) the order."""
    for top in SCANNED_ROOTS:
        for folder, _, names in sorted(os.walk(os.path.join(root, top))):
            for name in sorted(names):
                if not name.endswith(SOURCE_SUFFIXES):
                    continue
                full = os.path.join(folder, name)
                rel = os.path.relpath(full, root).replace(os.sep, "/")
                here = layer_of(rel)
                with open(full, encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        match = INCLUDE.match(line)
                        if not match:
                            continue
                        target = layer_of(match.group(1))
                        if target is None or target[0] == here[0]:
                            continue
                        if target[1] < here[1]:
                            continue
                        relation = "above" if target[1] > here[1] else "beside"
                        yield (f'{rel}:{number}: includes "{match.group(1)}": '
                               f"{here[0]}/ may not include {target[0]}/, which is "
                               f"{relation} it in the order {ORDER}")


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))
    found = list(violations(root))
    for message in found:
        print(message)
    if found:
        print(f"check_layering: {len(found)} include(s) point up the order", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
