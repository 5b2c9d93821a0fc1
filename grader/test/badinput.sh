# badinput.sh - make test's table of bad input (grader/test/bad-inputs.tsv): every make target, explorer, grader and
# staff script, given what a student or an instructor could mistype, must exit with the row's status and say one line
# on stderr that holds the row's words, with no traceback and no hang, and leave every file the user had as it was.
# Needs no GPU, and hides it (XL_NO_GPU=1); installs nothing (XL_NO_INSTALL=1). Sourced by grader/test/test.sh (B,
# LOG, ok / bad, section). It reads and writes build/results, build/data, build/stability and build/plots: run it
# where no other section writes them at the same time.
#
# The table: a header row, then one row per bad input, tab-separated: what (a short name), rc (the exit status the
# tool documents), says (a fixed piece of the one line, naming the problem), command (run with bash -c from the kit's
# root; "$T" is a scratch folder of this section's own, for a row that needs a file or a student tree to work on).
# Each row gets 20 s; one that builds or grades is no check of bad input: a bad value is refused before any work.

section "bad input: the exit status, one line on stderr, the user's files unchanged (grader/test/bad-inputs.tsv)"
bi_table=grader/test/bad-inputs.tsv
bi_tmp=$(mktemp -d /tmp/xferlab-badinput.XXXXXX)

# bi_named CMD - the paths CMD names that exist, one per line: its words, and what follows a '=' in them
bi_named() {
    local - w p
    set -f
    for w in $(printf '%s' "$1" | tr "\"';&|<>()" ' '); do
        for p in "$w" "${w#*=}"; do [ -e "$p" ] && printf '%s\n' "$p"; done
    done | sort -u
}

# bi_snapshot CMD - what the user has, a line each: the checksum of every file git tracks or would (or why it cannot
# be read), every folder and the checksum of every file under build/results, build/data, build/stability and
# build/plots, the entries of the kit's root, and each path CMD names (a file's checksum; a folder's entries, or only
# that it is a folder when it lies outside the kit, as /tmp does, where other programs come and go)
bi_snapshot() {
    local built=(build/results build/data build/stability build/plots) p
    if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then git ls-files -z --cached --others --exclude-standard
    else find . \( -path ./build -o -path ./.git \) -prune -o -type f -print0; fi | xargs -0 md5sum 2>&1
    find "${built[@]}" -type d -printf 'folder %p\n' 2>/dev/null | sort
    find "${built[@]}" ! -type d -print0 2>/dev/null | sort -z | xargs -0 -r md5sum 2>&1
    ls -A | sed 's/^/root /'
    bi_named "$1" | while IFS= read -r p; do
        if [ ! -d "$p" ]; then md5sum "$p" 2>&1
        elif [ "${p#/}" = "$p" ]; then ls -A "$p" | sed "s|^|in $p: |"
        else echo "folder $p"; fi
    done
}

# bi_row WHAT RC SAYS COMMAND - runs one row: ok, or bad with the row's name and each thing that went wrong (the
# status, the lines on stderr, a traceback, the words missing, the files changed), the command and what it said
bi_row() {
    local what=$1 want=$2 says=$3 cmd=$4 before after rc lines=() changed why=() said reasons
    before=$(bi_snapshot "$cmd")
    env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS XL_NO_GPU=1 XL_NO_INSTALL=1 T="$bi_tmp" \
        timeout -k 5 20 bash -c "$cmd" </dev/null >/dev/null 2>"$bi_tmp/.stderr"
    rc=$?
    mapfile -t lines <"$bi_tmp/.stderr"
    after=$(bi_snapshot "$cmd")
    changed=$(diff <(echo "$before") <(echo "$after") | sed -n 's/^[<>] //p' | sed 's/^[0-9a-f]\{32\}  //' |
        sort -u | head -4 | tr '\n' ' ' | sed 's/ $//')
    said=$(printf '%s / ' "${lines[@]}" | cut -c1-400)
    [ $rc != 124 ] && [ $rc != 137 ] || why+=("still running after 20 s (a hang?)")
    [ "$rc" = "$want" ] || why+=("exit $rc, not $want")
    [ ${#lines[@]} = 1 ] && [ -n "${lines[0]//[[:space:]]/}" ] || why+=("${#lines[@]} lines on stderr, not one")
    [[ "${lines[*]}" != *Traceback* ]] || why+=("a traceback")
    [[ "${lines[*]}" == *"$says"* ]] || why+=("no '$says' on stderr")
    [ -z "$changed" ] || why+=("changed the user's files: $changed")
    if [ ${#why[@]} = 0 ]; then ok "$what: exit $rc, '${lines[0]}'"; return; fi
    reasons=$(printf '%s; ' "${why[@]}")
    bad "$what: ${reasons%; } [$cmd] said: ${said% / }"
}

if [ ! -d solutions ]; then skipped "bad input: the table is the full kit's (a student tree has no staff scripts)"; else
bi_rows=0
while IFS=$'\t' read -r bi_what bi_rc bi_says bi_cmd; do
    [ -n "$bi_what" ] || continue
    bi_rows=$((bi_rows + 1))
    bi_row "$bi_what" "$bi_rc" "$bi_says" "$bi_cmd"
done < <(tail -n +2 "$bi_table")
[ "$bi_rows" -ge 100 ] && ok "the table has $bi_rows bad inputs (100 or more)" ||
    bad "the table has $bi_rows bad inputs, fewer than 100 ($bi_table)"
fi
rm -rf "$bi_tmp"
