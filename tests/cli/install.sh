#!/usr/bin/env bash
# install.sh - `cmake --install` into a temporary prefix: the binary, the
# data, the manual page and the bash completion land where they should; the
# installed binary finds its data from any directory (also moved or reached
# through a symbolic link) and the uninstalled build still finds the source
# tree's; HEPTASIM_DATA comes first and a missing one is refused; the manual
# page renders and lists each command's options as its --help does; the
# completion completes commands, options and data names.
. "$(dirname "$0")/../lib/cli.sh" "$@"

# The build tree of the binary under test: the nearest CMakeCache.txt above it.
build=$(dirname "$bin")
while [ "$build" != / ] && [ ! -f "$build/CMakeCache.txt" ]; do build=$(dirname "$build"); done
if [ ! -f "$build/CMakeCache.txt" ]; then
  ko "no CMakeCache.txt in a directory above $bin: not a CMake build"
  summary
fi
src=$(sed -n 's/^heptasim_SOURCE_DIR:STATIC=//p' "$build/CMakeCache.txt")
prefix=$tmp/p
share=$prefix/share/heptasim
installed=$prefix/bin/heptasim

# the binary's own look-up is under test: nothing from the caller
unset HEPTASIM_DATA
small=(-p dgx-a100 --devices 8 --set model.layers=4 --set tp_x=2 --set pp=2 --set dp=2 --set vpp=1
       --set schedule=1f1b --set global_batch=16)

# ------------------------------------------------------------ install
# Into this script's own prefix (the build tree only gets its install_manifest.txt).
if capture cmake --install "$build" --prefix "$prefix"; then ok; else
  ko "cmake --install $build --prefix $prefix: exit status $status"
  sed 's/^/    /' "$tmp/err"
  summary
fi
check "installed binary $installed" test -x "$installed"
for d in models platforms strategies results/published results/golden; do
  if diff <(cd "$src/$d" && find . -type f | sort) <(cd "$share/$d" 2>/dev/null && find . -type f | sort) \
    >"$tmp/diff"; then ok; else
    ko "$share/$d does not hold the files of $src/$d:"
    sed 's/^/    /' "$tmp/diff"
  fi
done
man_page=$prefix/share/man/man1/heptasim.1
completion=$prefix/share/bash-completion/completions/heptasim
check "manual page $man_page" test -s "$man_page"
check "bash completion $completion" test -s "$completion"

# ------------------------------------------------------------ finding the data
cd / || exit 1
# a model that only the installed data holds: found by the installed binary
# (so it reads its own share/heptasim), not by the build (which reads $src)
sed 's/"name": *"[^"]*"/"name": "install-only"/' "$share/models/gpt-1.7b.json" >"$share/models/install-only.json"

if capture "$installed" run -q -m gpt-1.7b "${small[@]}" && [ ! -s "$tmp/out" ]; then ok; else
  ko "from /: $installed run -q: exit status $status, stdout $(wc -c <"$tmp/out") bytes; stderr:"
  sed 's/^/    /' "$tmp/err"
fi
if capture "$installed" run -q -m gpt-1.7b "${small[@]}" --json - && grep -q '"step_time_s"' "$tmp/out"; then ok
else ko "from /: $installed run --json - gave no step_time_s (exit status $status)"; fi
if capture "$installed" memory -m install-only "${small[@]}" && grep -q 'fits' "$tmp/out"; then ok; else
  ko "from /: $installed memory -m install-only: exit status $status; stderr:"
  sed 's/^/    /' "$tmp/err"
fi
# the message names the installed location (here for a name that nowhere exists)
expect_cmd 2 "model 'no-such-model' not found" "'$share/models/no-such-model.json'" \
  -- "$installed" memory -m no-such-model "${small[@]}"

# the uninstalled build, from another directory: the source tree's data
if capture "$bin" memory -m gpt-1.7b "${small[@]}"; then ok; else
  ko "from /: $bin memory: exit status $status; stderr:"
  sed 's/^/    /' "$tmp/err"
fi
expect_cmd 2 "model 'install-only' not found" "'$src/models/install-only.json'" \
  -- "$bin" memory -m install-only "${small[@]}"

# HEPTASIM_DATA first, for both
if capture env HEPTASIM_DATA="$share" "$bin" memory -m install-only "${small[@]}"; then ok
else ko "HEPTASIM_DATA=$share $bin memory -m install-only: exit status $status"; fi
mkdir -p "$tmp/empty"
expect_cmd 2 "model 'gpt-1.7b' not found" "'$tmp/empty/models/gpt-1.7b.json'" \
  -- env HEPTASIM_DATA="$tmp/empty" "$installed" memory -m gpt-1.7b "${small[@]}"
# a missing HEPTASIM_DATA: one line, exit 2, whatever the command
expect_cmd 2 "^heptasim: HEPTASIM_DATA '$tmp/missing' is not a directory \(unset it" \
  -- env HEPTASIM_DATA="$tmp/missing" "$installed" run -q
expect_cmd 2 "HEPTASIM_DATA '$tmp/missing' is not a directory" \
  -- env HEPTASIM_DATA="$tmp/missing" "$bin" memory -m gpt-1.7b "${small[@]}"

# the prefix moved, and the binary reached through a symbolic link
mv "$prefix" "$tmp/moved"
if capture "$tmp/moved/bin/heptasim" memory -m install-only "${small[@]}"; then ok
else ko "a moved prefix: $tmp/moved/bin/heptasim memory -m install-only: exit status $status"; fi
mkdir -p "$tmp/elsewhere"
ln -s "$tmp/moved/bin/heptasim" "$tmp/elsewhere/heptasim"
if capture "$tmp/elsewhere/heptasim" memory -m install-only "${small[@]}"; then ok
else ko "through a symbolic link: $tmp/elsewhere/heptasim memory -m install-only: exit status $status"; fi
mv "$tmp/moved" "$prefix"

# ------------------------------------------------------------ manual page
# renders without a warning
if command -v man >/dev/null 2>&1; then render=(man -l)
elif command -v groff >/dev/null 2>&1; then render=(groff -man -Tutf8)
elif command -v nroff >/dev/null 2>&1; then render=(nroff -man)
else render=(); fi
if [ ${#render[@]} -eq 0 ]; then
  skip "manual page rendering: neither man, groff nor nroff is installed"
elif capture env MANWIDTH=80 "${render[@]}" "$man_page" && ! grep -Eqi 'warning|error' "$tmp/err" &&
  grep -q 'heptasim - simulate one training step' "$tmp/out" && grep -q 'EXIT STATUS' "$tmp/out"; then ok
else
  ko "${render[*]} $man_page: exit status $status, no NAME line or warnings:"
  sed 's/^/    /' "$tmp/err"
fi
if command -v groff >/dev/null 2>&1; then
  if capture groff -man -ww -z "$man_page" && [ ! -s "$tmp/err" ]; then ok; else
    ko "groff -ww warns on $man_page:"
    sed 's/^/    /' "$tmp/err"
  fi
fi
version=$("$installed" --version)
check "the manual page's version is '$version'" grep -q "^\.TH HEPTASIM 1 .*\"$version\"" "$man_page"

# commands and options as --help lists them
long_options() { sed -n 's/^ \{1,\}\(-[a-zA-Z], \)\{0,1\}\(--[a-z0-9-]*\).*/\2/p' | grep -vx -- --help | sort -u; }
# man_block SECTION [SUBSECTION]: the lines of that part of the roff source
man_block() {
  awk -v sh="$1" -v ss="${2:-}" '
    /^\.SH / { in_sh = ($2 == sh); in_ss = 0; next }
    /^\.SS / { in_ss = ($2 == ss); if (in_sh && ss == "") print; next }
    in_sh && (ss == "" || in_ss)' "$man_page"
}
man_options() { sed 's/\\-/-/g' | grep -o -- '--[a-z0-9][a-z0-9-]*' | grep -vx -- --help | sort -u; }
commands=$("$installed" --help | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p')
man_commands=$(man_block COMMANDS | sed -n 's/^\.SS //p' | sort)
check "the manual page's commands are those of heptasim --help" \
  test "$(sort <<<"$commands")" = "$man_commands" -a -n "$commands"
all=""
for c in $commands; do
  want=$("$installed" "$c" --help | long_options)
  all+=$want$'\n'
  have=$(man_block COMMANDS "$c" | man_options)
  if [ -n "$want" ] && [ "$want" = "$have" ]; then ok; else
    ko "the manual page's options of '$c' differ from 'heptasim $c --help' (< --help, > manual page):"
    diff <(echo "$want") <(echo "$have") | grep '^[<>]' | sed 's/^/    /'
  fi
done
want=$(printf '%s--version\n' "$all" | grep . | sort -u)
have=$(man_block OPTIONS | grep -A1 '^\.TP' | man_options)
if [ "$want" = "$have" ]; then ok; else
  ko "the manual page's OPTIONS differ from the options of every --help (< --help, > manual page):"
  diff <(echo "$want") <(echo "$have") | grep '^[<>]' | sed 's/^/    /'
fi

# ------------------------------------------------------------ completion
# complete WORDS...: the completions of the last word, one a line, from the
# installed completion in a clean bash with the installed heptasim first on PATH
complete_words() {
  PATH=$prefix/bin:$PATH bash --norc --noprofile -c '
    . "$1" || exit 3
    shift
    COMP_WORDS=("$@")
    COMP_CWORD=$(($# - 1))
    _heptasim
    printf "%s\n" "${COMPREPLY[@]}"' completion "$completion" "$@" 2>"$tmp/err"
}
# completes WANT WORDS...: WANT is among the completions of WORDS
completes() {
  local want=$1 got
  shift
  got=$(complete_words "$@")
  if grep -qx -- "$want" <<<"$got"; then ok; else
    ko "completion of '$*' has no '$want'; got: $(tr '\n' ' ' <<<"$got") $(cat "$tmp/err")"
  fi
}
if bash --norc --noprofile -c '. "$1" && complete -p heptasim' completion "$completion" >"$tmp/out" 2>"$tmp/err" &&
  grep -q _heptasim "$tmp/out" && [ ! -s "$tmp/err" ]; then ok
else ko "sourcing $completion: $(cat "$tmp/err")"; fi
completes run heptasim r
if complete_words heptasim r | grep -qv '^r'; then ko "completion of 'heptasim r' offers a word without r"; else ok; fi
completes gpt-1.7b heptasim run -m gpt-1.
completes install-only heptasim memory --model install-o
completes dgx-a100 heptasim sweep -p dgx-a
completes mixtral-8x22b-a3-7d heptasim run -s mix
completes --symmetry heptasim run --sy
completes megatron heptasim sweep --space ''
completes steps heptasim run --comm-mode = s
if complete_words heptasim memory --tr | grep -q .; then ko "completion offers --trace to memory"; else ok; fi

summary
