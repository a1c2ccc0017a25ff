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
# Inside jit/, the rooms have an order of their own, checked the same way:
#
#   jit/kernel, jit/code  <-  target interface (target.h, compile_options.h)
#     <-  jit/x64, jit/a64  <-  jit/calls  <-  driver (the rest of jit/)
#
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

# The rooms of jit/ (exact files before folders; the first match wins).
JIT_ROOMS = [
    ("jit/kernel/", "jit/kernel", 0),
    ("jit/code/", "jit/code", 0),
    ("jit/target.h", "jit target interface", 1),
    ("jit/compile_options.h", "jit target interface", 1),
    ("jit/x64/", "jit/x64", 2),
    ("jit/a64/", "jit/a64", 2),
    ("jit/calls/", "jit/calls", 3),
    ("jit/", "jit driver", 4),
]
JIT_ORDER = ("jit/kernel, jit/code <- target interface (target.h, compile_options.h) "
             "<- jit/x64, jit/a64 <- jit/calls <- jit driver")
SCANNED_ROOTS = ["ir", "runtime", "interpreter", "passes", "jit", "capi", "tools"]
SOURCE_SUFFIXES = (".h", ".cc", ".c", ".cpp", ".inc")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def layer_of(path, layers=LAYERS):
    """The (name, rank) of the layer a repository-relative path lies in, or None."""
    for prefix, name, rank in layers:
        if path.startswith(prefix):
            return name, rank
    return None


def rule_broken(here, target, order):
    """The words for an include from layer `here` to `target`, or None if allowed."""
    if target is None or target[0] == here[0] or target[1] < here[1]:
        return None
    relation = "above" if target[1] > here[1] else "beside"
    return f"{here[0]} may not include {target[0]}, which is {relation} it in the order {order}"


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
                        included = match.group(1)
                        rule = rule_broken(here, layer_of(included), ORDER)
                        if rule is None and here[0] == "jit" and included.startswith("jit/"):
                            rule = rule_broken(layer_of(rel, JIT_ROOMS),
                                               layer_of(included, JIT_ROOMS), JIT_ORDER)
                        if rule is not None:
                            yield f'{rel}:{number}: includes "{included}": {rule}'


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
