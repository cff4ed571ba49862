# bash completion for tracefs
_tracefs() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    if [[ $prev == -o ]]; then
        COMPREPLY=($(compgen -W "format= cache_size= xray_binary= index_dir= noindex allow_other debug" -- "$cur"))
        compopt -o nospace
        return
    fi
    if [[ $COMP_CWORD == 1 && $cur != -* ]]; then
        COMPREPLY=($(compgen -W "ls cat stat" -- "$cur") $(compgen -f -- "$cur"))
        return
    fi
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "-f -d -s -o -h --help -V --version" -- "$cur"))
        return
    fi
    COMPREPLY=($(compgen -f -- "$cur"))
}
complete -o filenames -F _tracefs tracefs
