#!/bin/sh
# Checks po/POTFILES: every listed file exists, and every .c/.ui file under app/ and ui/ that
# marks strings for translation (_( N_( or translatable="yes") is listed. Prints TAP-ish lines.
set -u
root=${1:-$(dirname "$0")/..}
potfiles="$root/po/POTFILES"
status=0

if [ ! -f "$potfiles" ]; then
    echo "not ok: $potfiles missing"
    exit 1
fi

# Listed files: skip comments and blank lines.
listed=$(sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$potfiles" | grep -v '^$')

for f in $listed; do
    if [ ! -f "$root/$f" ]; then
        echo "POTFILES lists $f, which does not exist"
        status=1
    fi
done

marked=$(cd "$root" && find app ui -type f \( -name '*.c' -o -name '*.ui' \) 2>/dev/null \
    | sort | while read -r f; do
        if grep -q -E '(^|[^A-Za-z0-9_])N?_\(|translatable="yes"' "$f"; then
            echo "$f"
        fi
    done)

for f in $marked; do
    if ! printf '%s\n' "$listed" | grep -qxF "$f"; then
        echo "$f marks strings for translation but is not in po/POTFILES"
        status=1
    fi
done

if [ $status -eq 0 ]; then
    echo "po/POTFILES complete: $(printf '%s\n' "$listed" | wc -l) files listed"
fi
exit $status
