# bash completion for shardctl and shardproxy.
#
# The programs compute the words themselves (`shardctl help --complete WORDS...`, `shardproxy
# --help-complete WORDS...`): subcommands and flags from the tables their parsers use, deployment
# names for --name from the state directory (--state-dir on the line, else the default). This
# script only passes the words and offers what comes back; ":files" / ":directories" ask for path
# completion. Installed as .../bash-completion/completions/{shardctl,shardproxy}; without
# bash-completion, `source` it from ~/.bashrc.

_shardctl_complete() {
  local program=${COMP_WORDS[0]}
  [[ $program == "~/"* ]] && program=$HOME/${program#"~/"}
  local -a hook=(help --complete)
  [[ ${program##*/} == shardproxy ]] && hook=(--help-complete)
  local current=${COMP_WORDS[COMP_CWORD]}
  local reply
  reply=$("$program" "${hook[@]}" "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null) || return 0
  COMPREPLY=()
  case $reply in
    :files)
      compopt -o filenames 2>/dev/null
      mapfile -t COMPREPLY < <(compgen -f -- "$current")
      ;;
    :directories)
      compopt -o filenames 2>/dev/null
      mapfile -t COMPREPLY < <(compgen -d -- "$current")
      ;;
    ?*)
      mapfile -t COMPREPLY <<<"$reply"
      ;;
  esac
}

complete -F _shardctl_complete shardctl shardproxy
