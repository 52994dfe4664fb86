#!/usr/bin/env python3
"""Checks the layer and family rules of ARCHITECTURE.md ("Layers and folders") by folder.

Scans every .c/.h/.cc/.cu/.cuh/.cpp under kernels/ and app/ for #include lines and prints
file:line: rule: what was included, for each include that breaks a rule:

  kernels      kernels/ includes nothing from app/ and no GLib/GTK header
  core         app/core/ includes nothing from app/gui/ or app/cli/ and no GTK header
  cli          app/cli/ includes nothing from app/gui/ and no GTK header
  family       a family's folder (kernels/<f>/, app/core/<f>/, app/gui/<f>/) includes nothing
               from another family's folder, in any layer
  generic      the top of kernels/ and of app/core/ (not a family folder, not app/core/io/)
               includes no family folder's header and not the registry header app/core/methods.h,
               except the registry files in REGISTRY_FILES
  gui          the top of app/gui/ (the window and the shared widgets) includes no family
               folder's header, except the registries in GUI_REGISTRY_FILES and what
               GUI_NOT_YET_PAGES lists (with the reason each is still there)
  window       app/gui/window*.c and window*.h name no family in their code (comments and
               #include lines aside): no family id as a word, in an identifier (fm_flim_...) or
               a string ("dce")

Usage: check_layers.py ROOT       check the tree at ROOT (exit 1 on any violation)
       check_layers.py --self-test  check a clean temporary tree (must pass) and one with each
                                    kind of violation (each must be reported)
"""
import os
import re
import sys
import tempfile

FAMILIES = {"lsi", "flim", "dce", "oct", "mcml"}
# Folders of app/core/ that are not families (shared by all of them).
CORE_SHARED_FOLDERS = {"io", "batch"}  # batch: studies of any family
# Headers at the top of core that name every family: only the registry may include them.
REGISTRY_HEADERS = {"app/core/methods.h"}
# The generic files allowed to name families: the registry's list of descriptors and its table.
REGISTRY_FILES = {
    "app/core/methods.h": "one registry line per family",
    "app/core/method.c": "the registry's table of methods, declared in app/core/methods.h",
}
# The GUI's registries: the list of family pages, and the start page's demos.
GUI_REGISTRY_FILES = {
    "app/gui/pages.c": "one line per family page",
    "app/gui/demos.c": "one demo per family",
}
# Families the window still hosts itself instead of as an FmFamilyPage, per including file.
GUI_NOT_YET_PAGES = {}
SOURCE_SUFFIXES = (".c", ".h", ".cc", ".cu", ".cuh", ".cpp")
SCANNED_FOLDERS = ("kernels", "app")

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')
BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.S)
GLIB_OR_GTK = re.compile(r"^(glib|glib-object|gio|gobject|gmodule|gtk|gdk|gdk-pixbuf)(/|\.h$)")
GTK = re.compile(r"^(gtk|gdk|gdk-pixbuf)(/|\.h$)")


def source_files(root):
    for top in SCANNED_FOLDERS:
        for folder, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(files):
                if name.endswith(SOURCE_SUFFIXES):
                    path = os.path.join(folder, name)
                    yield os.path.relpath(path, root).replace(os.sep, "/")


def includes(root, rel):
    """(line number, bracket, as written, path from the root) of each #include in rel."""
    with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
        text = f.read()
    # Blank out block comments but keep their newlines, so that line numbers stay right.
    text = BLOCK_COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    here = os.path.dirname(rel)
    for number, line in enumerate(text.split("\n"), 1):
        m = INCLUDE.match(line)
        if not m:
            continue
        bracket, written = m.groups()
        resolved = written
        if bracket == '"':
            # As the compiler looks: the including file's folder first, then the root (top_inc);
            # a missing file is taken from where its spelling points.
            beside = os.path.normpath(os.path.join(here, written)).replace(os.sep, "/")
            if os.path.isfile(os.path.join(root, beside)) or (
                written.startswith(".") and not os.path.isfile(os.path.join(root, written))
            ):
                resolved = beside
        yield number, bracket, written, os.path.normpath(resolved).replace(os.sep, "/")


def families_of(root):
    found = set(FAMILIES)
    core = os.path.join(root, "app", "core")
    if os.path.isdir(core):
        found |= {
            d
            for d in os.listdir(core)
            if os.path.isdir(os.path.join(core, d))
            and d not in CORE_SHARED_FOLDERS
            and not d.startswith(".")
        }
    return found


def family_folder(path, families):
    """The family whose folder (in any layer) holds path, else None."""
    parts = path.split("/")
    for layer in (["kernels"], ["app", "core"], ["app", "gui"]):
        n = len(layer)
        if parts[:n] == layer and len(parts) > n + 1 and parts[n] in families:
            return parts[n]
    return None


def is_generic(path):
    """At the top of kernels/ or app/core/ (not in a subfolder)."""
    parts = path.split("/")
    return (len(parts) == 2 and parts[0] == "kernels") or (
        len(parts) == 3 and parts[:2] == ["app", "core"]
    )


def is_generic_gui(path):
    """At the top of app/gui/ (the window, the application, the shared widgets)."""
    parts = path.split("/")
    return len(parts) == 3 and parts[:2] == ["app", "gui"]


LINE_COMMENT = re.compile(r"//[^\n]*")


def window_names(root, rel, families):
    """(line, family) for each family named in the code of a window*.c/.h file."""
    if not re.match(r"app/gui/window[^/]*\.[ch]$", rel):
        return
    with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
        text = f.read()
    text = BLOCK_COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    text = LINE_COMMENT.sub("", text)
    word = re.compile(r"(?i)(?<![a-z0-9])(" + "|".join(sorted(families)) + r")(?![a-z0-9])")
    for number, line in enumerate(text.split("\n"), 1):
        if INCLUDE.match(line):
            continue  # includes have rules of their own
        for family in sorted({m.group(1).lower() for m in word.finditer(line)}):
            yield number, family


def violations(root):
    families = families_of(root)
    count = 0
    found = []
    for rel in source_files(root):
        count += 1
        own = family_folder(rel, families)
        for number, family in window_names(root, rel, families):
            found.append(f"{rel}:{number}: window: names the {family} family: the window asks "
                         "its pages (app/gui/pages.c) instead")
        for number, bracket, written, target in includes(root, rel):
            where = f"{rel}:{number}"
            shown = f"{bracket}{written}{'>' if bracket == '<' else bracket}"

            def report(rule, why):
                found.append(f"{where}: {rule}: includes {shown}: {why}")

            if rel.startswith("kernels/"):
                if target.startswith("app/"):
                    report("kernels", "kernels never include the app")
                if GLIB_OR_GTK.match(written):
                    report("kernels", "kernels use no GLib or GTK")
            if rel.startswith("app/core/"):
                if target.startswith(("app/gui/", "app/cli/")):
                    report("core", "core never includes the GUI or the CLI")
                if GTK.match(written):
                    report("core", "core uses no GTK")
            if rel.startswith("app/cli/"):
                if target.startswith("app/gui/"):
                    report("cli", "the CLI never includes the GUI")
                if GTK.match(written):
                    report("cli", "the CLI uses no GTK")
            other = family_folder(target, families)
            if own and other and other != own:
                report("family", f"the {own} family never includes the {other} family's folder")
            if is_generic(rel) and rel not in REGISTRY_FILES:
                if other:
                    report("generic", f"a generic file names no family (here {other})")
                elif target in REGISTRY_HEADERS:
                    report("generic", "only the registry files include the list of methods")
            if (
                is_generic_gui(rel)
                and other
                and target.startswith("app/gui/")
                and rel not in GUI_REGISTRY_FILES
                and (rel, other) not in GUI_NOT_YET_PAGES
            ):
                report("gui", f"the window and shared widgets name no family page (here {other})")
    return count, found


def check(root):
    missing = [d for d in ("kernels", "app/core") if not os.path.isdir(os.path.join(root, d))]
    if missing:
        print(f"layers: {root} is not a Fluxmap tree (no {', '.join(missing)})")
        return 2
    count, found = violations(root)
    for line in found:
        print(line)
    if found:
        print(f"layers: {len(found)} violation(s) in {count} files (see ARCHITECTURE.md, "
              "'Layers and folders')")
        return 1
    print(f"layers: {count} files, no violation")
    return 0


def self_test():
    """A clean tree must pass; each planted violation must be reported by its rule."""
    clean = {
        "kernels/device.h": "#include <stddef.h>\n",
        "kernels/flim/flim.h": '#include "../device.h"\n',
        "kernels/flim/flim_cpu.c": '#include "flim.h"\n#include <omp.h>\n',
        "app/core/method.h": '#include <glib.h>\n#include "kernels/device.h"\n',
        "app/core/methods.h": '#include "app/core/method.h"\n',
        "app/core/method.c": '#include "method.h"\n#include "methods.h"\n',
        "app/core/io/mci.h": '#include "kernels/flim/flim.h"\n',
        "app/core/flim/flim_methods.c": (
            '#include "app/core/methods.h"\n#include "app/core/io/mci.h"\n'
            '#include "kernels/flim/flim.h"\n/*\n#include "app/core/dce/dce_prep.h"\n*/\n'
        ),
        "app/core/dce/dce_prep.h": '#include "app/core/method.h"\n',
        "app/cli/main.c": '#include "app/core/flim/flim_methods.h"\n#include <gio/gio.h>\n',
        "app/gui/window.c": (
            '#include <gtk/gtk.h>\n#include "app/core/dce/dce_prep.h"\n'
            "/* comments may name flim and dce */\n"
        ),
        "app/gui/flim/flim-page.c": '#include "app/core/flim/flim_methods.h"\n',
        "app/gui/flim/flim-page.h": "#include <gtk/gtk.h>\n",
        "app/gui/pages.c": '#include "app/gui/flim/flim-page.h"\n',
    }
    planted = [  # (rule, file, the line added to it)
        ("kernels", "kernels/flim/flim_cpu.c", '#include "app/core/method.h"'),
        ("kernels", "kernels/device.h", "#include <glib.h>"),
        ("core", "app/core/roi.c", '#include "app/gui/window.h"'),
        ("core", "app/core/io/mci.h", "#include <gtk/gtk.h>"),
        ("cli", "app/cli/main.c", '#include "app/gui/window.h"'),
        ("cli", "app/cli/run.c", "#include <gtk/gtk.h>"),
        ("family", "app/core/flim/flim_prep.c", '#include "app/core/dce/dce_prep.h"'),
        ("family", "app/core/dce/dce_prep.c", '#include "../flim/flim_prep.h"'),
        ("family", "app/gui/dce/dce-page.c", '#include "app/gui/oct/oct-views.h"'),
        ("family", "kernels/oct/oct.c", '#include "../flim/flim.h"'),
        ("generic", "app/core/export.c", '  #  include "app/core/dce/dce_prep.h"'),
        ("generic", "app/core/job.c", '#include "methods.h"'),
        ("generic", "kernels/device.c", '#include "flim/flim.h"'),
        ("gui", "app/gui/window-jobs.c", '#include "app/gui/dce/dce-page.h"'),
        ("gui", "app/gui/window.c", '#include "flim/flim-page.h"'),
        ("window", "app/gui/window-jobs.c", 'static const char *page = "dce";'),
        ("window", "app/gui/window-private.h", "    FmFlimPanel *flim_panel;"),
    ]
    failures = 0

    def tree(files):
        folder = tempfile.TemporaryDirectory(prefix="fluxmap-layers-")
        for rel, text in files.items():
            path = os.path.join(folder.name, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "a", encoding="utf-8") as f:
                f.write(text)
        return folder

    with tree(clean) as root:
        _, found = violations(root)
        if found:
            failures += 1
            print("not ok: the clean tree reports " + "; ".join(found))
        else:
            print("ok: the clean tree passes")
    for rule, rel, line in planted:
        files = dict(clean)
        files[rel] = files.get(rel, "") + line + "\n"
        with tree(files) as root:
            _, found = violations(root)
            hit = [f for f in found if f.startswith(rel + ":") and f": {rule}: " in f]
            if hit and len(found) == len(hit):
                print(f"ok: {rule} rule reports {hit[0]}")
            else:
                failures += 1
                print(f"not ok: {rule} rule, {rel} with {line.strip()}: reported {found}")
    print("self-test " + ("failed" if failures else "passed"))
    return 1 if failures else 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 2 or argv[1].startswith("-"):
        print(__doc__.split("\n\n")[-1], file=sys.stderr)
        return 2
    return check(argv[1])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
