# bash completion for tracefs
#
#   tracefs [options] TRACE MOUNTPOINT     files, then directories
#   tracefs ls|cat|stat [options] TRACE PATH...
#   tracefs index list|clean [--all] [options]
#                                          PATH: the trace's own tree, listed by `tracefs ls`
#   -o NAME[=VALUE],...                    every option; format= values; paths for
#                                          xray_binary= and index_dir=
#
# The words are taken from COMP_LINE rather than COMP_WORDS, which bash
# splits at '=' and ':' (COMP_WORDBREAKS): "-o format=fxt" stays one word.
# Replies are trimmed back to the part after the last such break, which is
# the text bash replaces.

_tracefs_options="format= cache_size= threads= read_ahead= xray_binary= index_dir= index_max= noindex fsname= subtype= debug
allow_other allow_root auto_unmount default_permissions max_read= blkdev"
_tracefs_flags="-f -d -s -o -h --help -V --version"

# The formats the binary was built with (tracefs --version), else the five.
_tracefs_formats() {
    local line
    line=$("$1" --version 2>/dev/null | sed -n 's/^formats: //p')
    [ -n "$line" ] && echo "${line//,/}" || echo "rr xray apitrace fxt sp-rtrace"
}

# Adds to COMPREPLY the words of $2... that start with $1.
_tracefs_add_matching() {
    local cur=$1 word
    shift
    for word in "$@"; do
        [[ $word == "$cur"* ]] && COMPREPLY+=("$word")
    done
}

# -o values: the item after the last comma.
_tracefs_complete_option() {
    local cmd=$1 cur=$2 head="" item=$2 word
    if [[ $cur == *,* ]]; then
        head=${cur%,*},
        item=${cur##*,}
    fi
    case $item in
        format=*)
            for word in $(_tracefs_formats "$cmd"); do
                [[ format=$word == "$item"* ]] && COMPREPLY+=("${head}format=$word")
            done
            ;;
        xray_binary=* | index_dir=*)
            local name=${item%%=*} value=${item#*=}
            while IFS= read -r word; do
                [ -d "$word" ] && word+=/
                COMPREPLY+=("$head$name=$word")
            done < <(if [ "$name" = index_dir ]; then compgen -d -- "$value"; else compgen -f -- "$value"; fi)
            ;;
        *)
            for word in $_tracefs_options; do
                [[ $word == "$item"* ]] && COMPREPLY+=("$head$word")
            done
            ;;
    esac
    compopt -o nospace 2>/dev/null
}

# A path of the trace's tree: the entries of its directory part, listed by
# `tracefs ls`; directories (asked of `tracefs stat` when there are up to
# 1000 matches) end in '/'.
_tracefs_complete_tree() {
    local cmd=$1 trace=$2 cur=$3
    shift 3
    local dir="" prefix="" name line kind
    if [[ $cur == */* ]]; then
        dir=${cur%/*}
        prefix=$dir/
    fi
    local names=()
    while IFS= read -r name; do
        [[ $prefix$name == "$cur"* ]] && names+=("$prefix$name")
    done < <("$cmd" ls "$@" "$trace" ${dir:+"$dir"} 2>/dev/null)
    [ ${#names[@]} -gt 0 ] || return 0
    if [ ${#names[@]} -le 1000 ]; then
        # "PATH KIND SIZE INODE": the path may hold spaces, the rest does not.
        while IFS= read -r line; do
            kind=${line% * *}
            kind=${kind##* }
            name=${line% * * *}
            [ "$kind" = directory ] && name+=/
            COMPREPLY+=("$name")
        done < <("$cmd" stat "$@" "$trace" "${names[@]}" 2>/dev/null)
        compopt -o nospace 2>/dev/null
    else
        COMPREPLY+=("${names[@]}")
    fi
}

_tracefs() {
    local cmd=$1 line=${COMP_LINE:0:COMP_POINT}
    local -a words
    read -ra words <<< "$line"
    local cur=""
    if [[ $line != *[[:space:]] && ${#words[@]} -gt 0 ]]; then
        cur=${words[${#words[@]} - 1]}
        unset 'words[${#words[@]}-1]'
    fi
    COMPREPLY=()

    # The words before the current one: the command, -o options, positionals.
    local offline="" i word prev=""
    local -a positionals=() options=()
    for ((i = 1; i < ${#words[@]}; i++)); do
        word=${words[i]}
        if [ "$prev" = -o ]; then
            options+=(-o "$word")
        elif [[ $word == -o?* ]]; then
            options+=("$word")
        elif [[ $word != -* ]]; then
            if [ $i = 1 ] && [[ $word == ls || $word == cat || $word == stat || $word == index ]]; then
                offline=$word
            else
                positionals+=("$word")
            fi
        fi
        prev=$word
    done

    if [ "$prev" = -o ]; then
        _tracefs_complete_option "$cmd" "$cur"
    elif [[ $cur == -o?* ]]; then
        _tracefs_complete_option "$cmd" "${cur#-o}"
        COMPREPLY=("${COMPREPLY[@]/#/-o}")
    elif [ "$offline" = index ]; then
        if [ ${#positionals[@]} -eq 0 ]; then
            _tracefs_add_matching "$cur" list clean
        elif [ "${positionals[0]}" = clean ] && [[ $cur == -* ]]; then
            _tracefs_add_matching "$cur" --all -o
        elif [[ $cur == -* ]]; then
            _tracefs_add_matching "$cur" -o
        fi
    elif [[ $cur == -* ]]; then
        _tracefs_add_matching "$cur" $_tracefs_flags
    elif [ -n "$offline" ] && [ ${#positionals[@]} -ge 1 ]; then
        compopt +o filenames 2>/dev/null
        _tracefs_complete_tree "$cmd" "${positionals[0]}" "$cur" "${options[@]}"
    elif [ -z "$offline" ] && [ ${#positionals[@]} -ge 2 ]; then
        return 0
    elif [ -z "$offline" ] && [ ${#positionals[@]} -eq 1 ]; then
        while IFS= read -r word; do COMPREPLY+=("$word"); done < <(compgen -d -- "$cur")
    else
        [ ${#words[@]} -eq 1 ] && _tracefs_add_matching "$cur" ls cat stat index
        while IFS= read -r word; do COMPREPLY+=("$word"); done < <(compgen -f -- "$cur")
    fi

    # Bash replaces only the text after the last break character in the word.
    local breaks=${COMP_WORDBREAKS-=:} trimmed=$cur c
    for ((i = ${#cur} - 1; i >= 0; i--)); do
        c=${cur:i:1}
        if [[ $c != [[:space:]] && $breaks == *"$c"* ]]; then
            trimmed=${cur:0:i+1}
            COMPREPLY=("${COMPREPLY[@]#"$trimmed"}")
            break
        fi
    done
}
complete -o filenames -F _tracefs tracefs
