#!/bin/sh
# nvcc that also writes the header dependency file ninja reads ($out.d). Meson before 1.4 asks nvcc for
# none (mesonbuild/meson#11969, fixed by #12665), so an edited header rebuilt no CUDA object and host and
# device code could disagree on a struct's layout. packaging/dev.sh names this file as the CUDA compiler
# where meson is older.
out=
compile=0
prev=
for arg in "$@"; do
  [ "$prev" = "-o" ] && out=$arg
  [ "$arg" = "-c" ] && compile=1
  prev=$arg
done
if [ "$compile" = 1 ] && [ -n "$out" ]; then
  exec nvcc "$@" -MD -MT "$out" -MF "$out.d"
fi
exec nvcc "$@"
