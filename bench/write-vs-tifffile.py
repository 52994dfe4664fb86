#!/usr/bin/python3
"""Map writing as users meet it against tifffile (issue 26): lsi.spatial's two maps written by
`fluxmap-cli run --profile` (its "write" stage) and the same two arrays written by
tifffile.imwrite, each into a folder never used before, taking turns round by round (who goes
first alternates).

Needs Debian's python3-tifffile (apt install python3-tifffile).
Usage: bench/write-vs-tifffile.py FLUXMAP_CLI [ROUNDS]
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import tifffile


MAPS = ("contrast.tif", "sfi.tif")


def tifffile_write(maps_dir, out):
    """Reads the maps into new arrays and prints the ms tifffile.imwrite takes for them."""
    arrays = [tifffile.imread(os.path.join(maps_dir, name)) for name in MAPS]
    t0 = time.perf_counter()
    for name, a in zip(MAPS, arrays):
        tifffile.imwrite(os.path.join(out, name), a)
    print(1000 * (time.perf_counter() - t0))


def main():
    if sys.argv[1] == "--tifffile-write":
        tifffile_write(sys.argv[2], sys.argv[3])
        return
    cli = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    work = tempfile.mkdtemp(prefix="fm-write-vs-tifffile-")
    stack = os.path.join(work, "speckle.tif")
    subprocess.run([cli, "simulate", "lsi", "--width=1392", "--height=1040", "--frames=30",
                    "-o", stack], check=True, stdout=subprocess.DEVNULL)
    fluxmap_ms, tifffile_ms = [], []
    arrays = None

    def fluxmap_round(r):
        nonlocal arrays
        out = os.path.join(work, f"fluxmap-{r}")
        run = subprocess.run([cli, "run", "lsi.spatial", stack, "-o", out, "--backend=cpu",
                              "--no-catalogue", "--profile", "--json"],
                             check=True, capture_output=True, text=True)
        fluxmap_ms.append(json.loads(run.stdout)["profile"]["stages"]["write"])
        if arrays is None:  # the maps Fluxmap wrote, as tifffile gets them
            arrays = [tifffile.imread(os.path.join(out, name)) for name in MAPS]

    def tifffile_round(r):
        # A process of its own, like fluxmap-cli's: its arrays made fresh (read back from the
        # maps Fluxmap wrote), then written, the write timed.
        fresh = os.path.join(work, f"tifffile-{r}")
        os.mkdir(fresh)
        run = subprocess.run([sys.executable, __file__, "--tifffile-write", maps_dir, fresh],
                             check=True, capture_output=True, text=True)
        tifffile_ms.append(float(run.stdout))

    maps_dir = os.path.join(work, "fluxmap-first")
    fluxmap_round("first")  # the arrays for tifffile; not counted
    fluxmap_ms.clear()
    # Turns alternate: whoever goes second finds the memory the first one just freed.
    for r in range(rounds):
        for write in ((fluxmap_round, tifffile_round) if r % 2 == 0
                      else (tifffile_round, fluxmap_round)):
            write(r)
    mb = sum(a.nbytes for a in arrays) / 1e6
    print(f"2 maps, {arrays[0].shape} float32 each ({mb:.1f} MB in all), a fresh folder each, "
          f"{rounds} rounds in {work}")
    print(f"{'writer':<28}{'median ms':>10}{'min ms':>10}{'max ms':>10}{'GB/s':>8}")
    for name, v in (("fluxmap-cli run (write)", fluxmap_ms), ("tifffile.imwrite", tifffile_ms)):
        med = statistics.median(v)
        print(f"{name:<28}{med:>10.1f}{min(v):>10.1f}{max(v):>10.1f}{mb / med:>8.2f}")
    print("rounds, ms (fluxmap / tifffile):",
          ", ".join(f"{a:.0f}/{b:.0f}" for a, b in zip(fluxmap_ms, tifffile_ms)))
    print(f"fluxmap / tifffile (medians): "
          f"{statistics.median(fluxmap_ms) / statistics.median(tifffile_ms):.2f}x")


if __name__ == "__main__":
    main()
