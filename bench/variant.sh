#!/usr/bin/env bash
# Builds a variant of fluxmap-bench with one CUDA file recompiled under extra nvcc defines, for
# timing a build-time switch on the GPU machine without a second full build:
#   bench/variant.sh BUILD NAME FILE.cu -DSWITCH=VALUE...   ->  BUILD/NAME/fluxmap-bench
# e.g. bench/variant.sh build-gpu mcml-fast mcml_cuda.cu -DFM_MCML_FAST_MATH=1
#      bench/variant.sh build-gpu dce-mb4 dce_cuda.cu -DFM_DCE_WARP_MIN_BLOCKS=4
set -euo pipefail
build=$1 name=$2 file=$3
shift 3
mkdir -p "$build/$name"
compile=$(python3 -c "
import json, sys
for e in json.load(open('$build/compile_commands.json')):
    if e['file'].endswith('/$file') or e['file'] == '$file':
        print(e['command'])
        break
else:
    sys.exit('no compile command for $file in $build')")
object=$name/${file%.cu}.o
# Same command, extra defines, the object into the variant's folder.
compile=$(sed -E "s# -o [^ ]+ -c # $* -o $object -c #" <<<"$compile")
link=$(ninja -C "$build" -t commands bench/fluxmap-bench | tail -1)
# The link line names the library that holds the original object; link the variant object first
# so the linker takes its symbols from it (the library member is then not pulled in).
link=$(sed -E "s#-o bench/fluxmap-bench #-o $name/fluxmap-bench $object #" <<<"$link")
cd "$build"
eval "$compile"
eval "$link -Wl,--allow-multiple-definition"
echo "built $build/$name/fluxmap-bench: $file with $*"
