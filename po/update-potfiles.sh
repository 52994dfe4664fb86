#!/bin/sh
# Regenerates po/POTFILES from the files that mark strings (run near the end).
cd "$(dirname "$0")/.."
{
echo "# Source files with user-visible strings (checked by po/check-potfiles.sh)."
find app ui -type f \( -name '*.c' -o -name '*.cc' -o -name '*.ui' \) | sort | while read -r f; do
    grep -q -E '(^|[^A-Za-z0-9_])N?_\(|translatable="yes"' "$f" && echo "$f"
done
ls data/*.desktop* data/*.metainfo.xml data/*.gschema.xml 2>/dev/null
} > po/POTFILES
