#!/usr/bin/env bash
# bundle.sh DIR - packs Criterion's headers and runtime (with the libraries it needs beyond the C
# library) into DIR and DIR.tar.gz, for GPU hosts that have no Criterion and no package access.
# Run on a machine with libcriterion-dev (make bundle). On the GPU host: unpack into build/
# (tar xzf criterion.tar.gz -C build) and run make there: the Makefile finds build/criterion.
set -eu
[ $# -le 1 ] || { echo "usage: grader/env/bundle.sh [DIR] (default build/criterion)" >&2; exit 2; }
dir=${1:-build/criterion}
inc=$(pkg-config --variable=includedir criterion 2>/dev/null || echo /usr/include)
lib=$(pkg-config --variable=libdir criterion 2>/dev/null || echo /usr/lib/x86_64-linux-gnu)
so=$(ls "$lib"/libcriterion.so.* 2>/dev/null | head -1)
# DIR first (a wrong argument is named wherever this runs), then Criterion. DIR is replaced: refuse one that holds
# something else than an earlier bundle (make bundle's build/criterion)
if [ -e "$dir" ] && [ ! -f "$dir/include/criterion/criterion.h" ]; then
    echo "bundle: $dir exists and is not a Criterion bundle: name a new folder (default build/criterion)" >&2
    exit 2
fi
made=
[ -e "$dir" ] || { mkdir -p "$dir" 2>/dev/null && made=1; } ||
    { echo "bundle: cannot make the folder $dir: name one in a folder you can write" >&2; exit 2; }
if [ ! -f "$inc/criterion/criterion.h" ] || [ -z "$so" ]; then
    [ -z "$made" ] || rmdir "$dir"
    echo "bundle: Criterion is not installed here: run 'sudo apt-get install libcriterion-dev' first" >&2
    exit 1
fi
rm -rf "$dir" && mkdir -p "$dir/include" "$dir/lib" 2>/dev/null ||
    { echo "bundle: cannot make the folder $dir: name one in a folder you can write" >&2; exit 2; }
cp -r "$inc/criterion" "$dir/include/"
cp -L "$so" "$dir/lib/"
ln -sf "$(basename "$so")" "$dir/lib/libcriterion.so"
# every shared library it loads, except the C library's own (libc, libm, libdl, libpthread, librt, libresolv, ld.so)
ldd "$so" | awk '/=> \// { print $3 }' | while read -r dep; do
    case "$(basename "$dep")" in
        libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|libresolv.so.*|ld-linux*) ;;
        *) cp -L "$dep" "$dir/lib/" ;;
    esac
done
tar czf "$dir.tar.gz" -C "$(dirname "$dir")" "$(basename "$dir")"
echo "bundle: $dir ($(du -sh "$dir" | cut -f1)) and $dir.tar.gz; on the GPU host: tar xzf $(basename "$dir").tar.gz -C build && make test"
