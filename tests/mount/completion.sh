#!/usr/bin/env bash
# Bash completion (scripts/tracefs-completion.bash) in a real bash: the
# function is registered (complete -p), offers every -o option of --help
# (auto_unmount among them), the format= values of --version, subcommands
# and flags, and for `tracefs cat TRACE <TAB>` the paths of the trace's own
# tree as `tracefs ls` lists them (directories ending in /).
set -u
source "$(dirname "$0")/lib.sh"
work=$(mktemp -d /tmp/tracefs-completion-XXXXXX)
trap 'rm -rf "$work"' EXIT
trace=$TRACEFS_SOURCE_ROOT/tests/data/fxt/fxt-cpp_all-records.fxt
[ -f "$trace" ] || { echo "no test trace: skipped"; exit 77; }
mkdir -p "$work/bin" "$work/dirs/mnt-a" "$work/dirs/mnt-b"
touch "$work/dirs/file"
ln -s "$TRACEFS" "$work/bin/tracefs"
export PATH=$work/bin:$PATH

bash -n "$TRACEFS_SOURCE_ROOT/scripts/tracefs-completion.bash" || fail "syntax"
source "$TRACEFS_SOURCE_ROOT/scripts/tracefs-completion.bash"
complete -p tracefs | grep -q -- '-F _tracefs' || fail "complete -p: $(complete -p tracefs 2>&1)"

# complete LINE: what bash would offer with the cursor at the end of LINE
# (bash's own word breaks, so "format=" is split as in a terminal).
COMP_WORDBREAKS=$' \t\n"\'><=;|&(:'
complete_line() {
    COMP_LINE=$1
    COMP_POINT=${#1}
    COMPREPLY=()
    _tracefs tracefs "" ""
}
offers() {        # offers WHAT WORD...: each WORD is among the replies (checked with compgen)
    local what=$1 word
    shift
    for word in "$@"; do
        [ -n "$(compgen -W "${COMPREPLY[*]}" -X "!$word" -- "$word")" ] ||
            fail "$what: '$word' not offered (got: ${COMPREPLY[*]:0:30})"
    done
}
offers_not() {
    local what=$1 word
    shift
    for word in "$@"; do
        [ -z "$(compgen -W "${COMPREPLY[*]}" -X "!$word" -- "$word")" ] || fail "$what: '$word' offered"
    done
}

# Every -o option of --help, by its name.
help_options=$("$TRACEFS" --help | grep '^ ' | grep -oE -- '-o [a-z_]+=?' | sed 's/^-o //' | sort -u)
[ -n "$help_options" ] || fail "no -o options in --help"
complete_line "tracefs -o "
offers "-o options" $help_options auto_unmount allow_other
complete_line "tracefs -o auto_"
[ "${COMPREPLY[*]}" = auto_unmount ] || fail "-o auto_: ${COMPREPLY[*]}"
complete_line "tracefs -o noindex,form"
[ "${COMPREPLY[*]}" = noindex,format= ] || fail "-o noindex,form: ${COMPREPLY[*]}"

# format= values: every format of --version, after bash's break at '='.
formats=$("$TRACEFS" --version | sed -n 's/^formats: //p' | tr -d ,)
complete_line "tracefs -o format="
offers "format= values" $formats
[ "$(compgen -W "${COMPREPLY[*]}" -- sp)" = sp-rtrace ] || fail "format=sp: ${COMPREPLY[*]}"
complete_line "tracefs -o cache_size=64M,format=f"
[ "${COMPREPLY[*]}" = fxt ] || fail "-o cache_size=64M,format=f: ${COMPREPLY[*]}"
COMP_WORDBREAKS=$' \t\n'        # a shell without '=' as a break gets whole words
complete_line "tracefs -o format=f"
[ "${COMPREPLY[*]}" = format=fxt ] || fail "format=f without '=' breaks: ${COMPREPLY[*]}"
COMP_WORDBREAKS=$' \t\n"\'><=;|&(:'

# Subcommands, flags, files, mount points.
complete_line "tracefs "
offers "first word" ls cat stat index
complete_line "tracefs index "
offers "index" list clean
complete_line "tracefs index clean --a"
[ "${COMPREPLY[*]}" = --all ] || fail "index clean --a: ${COMPREPLY[*]}"
complete_line "tracefs --he"
[ "${COMPREPLY[*]}" = --help ] || fail "--he: ${COMPREPLY[*]}"
cd "$work/dirs"
complete_line "tracefs $trace "
offers "mount point" mnt-a mnt-b
offers_not "mount point" file
cd - >/dev/null

# tracefs cat TRACE <TAB>: the tree, as tracefs ls lists it.
complete_line "tracefs cat $trace "
for name in $("$TRACEFS" ls "$trace"); do
    if [ "$("$TRACEFS" stat "$trace" "$name" | awk '{print $2}')" = directory ]; then
        offers "cat TRACE" "$name/"
    else
        offers "cat TRACE" "$name"
    fi
done
[ ${#COMPREPLY[@]} = "$("$TRACEFS" ls "$trace" | wc -l)" ] || fail "cat TRACE: ${#COMPREPLY[@]} replies"
complete_line "tracefs cat $trace threads/"
tid=$("$TRACEFS" ls "$trace" threads | head -n 1)
offers "cat TRACE threads/" "threads/$tid/"
complete_line "tracefs cat $trace threads/$tid/ev"
offers "cat TRACE threads/$tid/ev" "threads/$tid/events" "threads/$tid/events.jsonl"
offers_not "cat TRACE threads/$tid/ev" "threads/$tid/info.json"
complete_line "tracefs ls -o format=fxt $trace uob"
[ "${COMPREPLY[*]}" = uobjects/ ] || fail "ls -o format=fxt TRACE uob: ${COMPREPLY[*]}"
complete_line "tracefs stat $trace uobjects/0x"
[ "${COMPREPLY[*]}" = uobjects/0xdeadbeef.json ] || fail "stat TRACE uobjects/0x: ${COMPREPLY[*]}"
finish
