# completion.bash - bash completion for heptasim: the commands and each
# command's options as 'heptasim --help' and 'heptasim COMMAND --help' list
# them, the values an option's help names (flows|steps, FILE, ...), and the
# names of the models, platforms and strategies of the data directory.
#
# Installed as PREFIX/share/bash-completion/completions/heptasim, which
# bash-completion loads on demand; or source this file.

# The data directory, in heptasim's own look-up order: $HEPTASIM_DATA, else
# share/heptasim beside the binary, else the source tree of a build tree.
_heptasim_data() {
  local exe
  if [ -n "${HEPTASIM_DATA:-}" ]; then
    printf '%s\n' "$HEPTASIM_DATA"
    return
  fi
  exe=$(type -P -- "$1") && exe=$(readlink -f -- "$exe") || return
  local bin=${exe%/*}
  if [ -d "$bin/../share/heptasim" ]; then
    printf '%s\n' "$bin/../share/heptasim"
  elif [ -f "$bin/CMakeCache.txt" ]; then
    sed -n 's/^heptasim_SOURCE_DIR:STATIC=//p' "$bin/CMakeCache.txt"
  fi
}

# _heptasim_names EXE KIND CUR: the names in DATA/KIND/*.json starting with CUR.
_heptasim_names() {
  local data f name
  data=$(_heptasim_data "$1")
  [ -n "$data" ] || return
  for f in "$data/$2"/*.json; do
    [ -f "$f" ] || continue
    name=${f##*/}
    name=${name%.json}
    [[ $name == "$3"* ]] && printf '%s\n' "$name"
  done
}

# _heptasim_value EXE METAVAR CUR: candidates for an option's argument, from
# its help's METAVAR: literal alternatives (tp|dp|none), names (MODEL,
# PLATFORM, STRATEGY, RELIABILITY), paths (FILE); nothing for numbers and lists.
_heptasim_value() {
  local exe=$1 cur=$3 part parts
  IFS='|' read -ra parts <<<"$2"
  for part in "${parts[@]}"; do
    case $part in
      MODEL | PLATFORM | STRATEGY | RELIABILITY)
        case $part in
          MODEL) _heptasim_names "$exe" models "$cur" ;;
          PLATFORM) _heptasim_names "$exe" platforms "$cur" ;;
          STRATEGY) _heptasim_names "$exe" strategies "$cur" ;;
          RELIABILITY) _heptasim_names "$exe" reliability "$cur" ;;
        esac
        # a path: directories and JSON files, once something is typed
        [ -n "$cur" ] && compgen -d -- "$cur" && compgen -f -X '!*.json' -- "$cur"
        ;;
      FILE*) compgen -f -- "$cur" ;;
      DIR) compgen -d -- "$cur" ;;
      *[a-z0-9-]*) [[ $part == "$cur"* ]] && printf '%s\n' "$part" ;;
    esac
  done
}

_heptasim() {
  local exe=${COMP_WORDS[0]} cword=$COMP_CWORD
  local cur=${COMP_WORDS[cword]} prev=""
  [ "$cword" -gt 0 ] && prev=${COMP_WORDS[cword - 1]}
  # --opt=VALUE: bash splits the word at '='
  if [ "$cur" = "=" ]; then
    cur=""
  elif [ "$prev" = "=" ] && [ "$cword" -gt 1 ]; then
    prev=${COMP_WORDS[cword - 2]}
  fi
  COMPREPLY=()
  local IFS=$'\n' # compgen -W splits its words on newlines only

  if [ "$cword" -eq 1 ]; then
    local commands
    commands=$("$exe" --help 2>/dev/null | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p')
    mapfile -t COMPREPLY < <(compgen -W "$commands"$'\n'"--help"$'\n'"--version" -- "$cur")
    return
  fi

  local help line names=() metavars=() positional=""
  help=$("$exe" "${COMP_WORDS[1]}" --help 2>/dev/null) || return
  local re='^ +(-[a-zA-Z], )?(--[a-z0-9-]+)( ([^ ]+))?  '
  while IFS= read -r line; do
    if [[ $line =~ $re ]]; then
      names+=("${BASH_REMATCH[2]}")
      metavars+=("${BASH_REMATCH[4]}")
      [ -n "${BASH_REMATCH[1]}" ] && names+=("${BASH_REMATCH[1]:0:2}") && metavars+=("${BASH_REMATCH[4]}")
    elif [[ $line == "usage: "*"[options] "?* ]]; then
      positional=1
    fi
  done <<<"$help"

  local i
  for i in "${!names[@]}"; do
    if [ "${names[i]}" = "$prev" ] && [ -n "${metavars[i]}" ]; then
      mapfile -t COMPREPLY < <(_heptasim_value "$exe" "${metavars[i]}" "$cur" | sort -u)
      return
    fi
  done
  if [[ $cur == -* ]] || [ -z "$positional" ]; then
    local longs=()
    for i in "${names[@]}"; do [[ $i == --* ]] && longs+=("$i"); done
    mapfile -t COMPREPLY < <(compgen -W "${longs[*]}" -- "$cur")
  else
    mapfile -t COMPREPLY < <(compgen -f -- "$cur")
  fi
}

complete -o filenames -F _heptasim heptasim
