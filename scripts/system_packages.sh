#!/usr/bin/env bash
# Installs the Debian packages parlour's tests and demo use, when they are missing (make test and
# make demo run it first):
#   bubblewrap  the code sandbox (coding environments, parlour doctor sandbox)
#   postgresql  the shared leaderboard store's tests start a private server
#   chromium    the leaderboard pages are tested in headless Chromium
#   libseccomp2 the sandbox's seccomp filter (pyseccomp loads it)
#   stockfish   the strong agent of Chess (Debian installs it as /usr/games/stockfish)
# As root with apt-get it installs them; otherwise it says what to run and which
# tests will be skipped (those tests skip with the same reason), and exits 0.
set -euo pipefail

need=()
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
ldconfig -p 2>/dev/null | grep -q "libseccomp.so.2 " || need+=(libseccomp2)
command -v stockfish >/dev/null 2>&1 || [ -x /usr/games/stockfish ] || need+=(stockfish)
[ ${#need[@]} -eq 0 ] && exit 0

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing system packages: ${need[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  exit 0
fi

cat >&2 <<MSG
parlour: missing system packages: ${need[*]}
  run:  sudo apt-get install -y --no-install-recommends ${need[*]}
  until then these tests are skipped, each saying why:
    bubblewrap, libseccomp2 -> tests/test_sandbox*.py, tests/test_coding_env.py, tests/test_coding_tasks.py
    postgresql -> the PostgreSQL cases of tests/test_leaderboard_*.py
    chromium   -> tests/test_leaderboard_web.py
    stockfish  -> the stockfish cases of tests/test_chess.py
MSG
