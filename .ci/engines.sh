#!/usr/bin/env bash
# Other SPARQL engines for kg's engine tests (tests/test_engines.py) and the bulk-load recipes
# in docs/scale-out.md: Debian's Virtuoso 7.2 and Apache Jena 4.5 (TDB2).
#
#   engines.sh install                          install both (idempotent; never fails: it warns)
#   engines.sh status                           say which engines are usable, loudly if not
#   engines.sh virtuoso-init DIR SQLPORT HTTPPORT   write DIR/virtuoso.ini (127.0.0.1 only)
#   engines.sh virtuoso-serve DIR               run Virtuoso on DIR in the foreground
#   engines.sh virtuoso-load DIR FILE...        bulk-load N-Quads/N-Triples (ld_dir + rdf_loader_run)
#   engines.sh virtuoso-sql DIR SQL             run SQL through isql-vt as dba
#   engines.sh jena-load DIR FILE...            bulk-load into a TDB2 database (tdb2.tdbloader)
#   engines.sh jena-serve DIR PORT              serve DIR's TDB2 over SPARQL on 127.0.0.1:PORT
#   engines.sh jena-classpath                   print the classpath for Debian's Jena
#
# Every server binds 127.0.0.1 and nothing else: Virtuoso's SQL and HTTP ports are given as
# 127.0.0.1:PORT, its Unix socket, mDNS ("Zero Config") and plugins are left out of the ini,
# and the Jena server (.ci/jena/KgJenaServer.java) binds the loopback address itself.
set -uo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
JAVA_DIR=/usr/share/java
CACHE="${KG_ENGINES_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kg-engines}"

say() { printf '%s\n' "$*" >&2; }
loud() {
  say "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
  say "!!! engines: $*"
  say "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
}

have_virtuoso() { command -v virtuoso-t >/dev/null 2>&1 && command -v isql-vt >/dev/null 2>&1; }
have_jena() {
  [ -f "$JAVA_DIR/jena-tdb2.jar" ] && command -v java >/dev/null 2>&1 \
    && java --list-modules 2>/dev/null | grep -q '^jdk.compiler@'
}

install() {
  if have_virtuoso && have_jena; then
    say "engines: Virtuoso and Jena are installed"
    return 0
  fi
  if [ "$(id -u)" != 0 ]; then
    loud "not root: cannot apt-get install virtuoso-opensource libapache-jena-java; the engine tests will be SKIPPED"
    return 0
  fi
  # The virtuoso package starts a server with the stock ini (all interfaces) unless told not
  # to: a policy-rc.d that refuses service starts keeps the install from starting anything.
  local policy=/usr/sbin/policy-rc.d made_policy=""
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && made_policy=1
  fi
  local packages="virtuoso-opensource libapache-jena-java"
  # The Jena server runs as a single-file Java program, which needs the JDK's compiler.
  java --list-modules 2>/dev/null | grep -q '^jdk.compiler@' || packages="$packages default-jdk-headless"
  say "engines: apt-get install $packages"
  if ! (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
      --no-install-recommends $packages >/dev/null); then
    loud "apt-get install $packages failed; the engine tests will be SKIPPED"
  fi
  [ -n "$made_policy" ] && rm -f "$policy"
  return 0
}

status() {
  local ok=0
  if have_virtuoso; then say "engines: Virtuoso: $( (virtuoso-t -? 2>&1 || true) | grep -m1 -o 'Version [0-9.]*')"
  else loud "Virtuoso (virtuoso-t, isql-vt) is not installed: its engine tests will be SKIPPED"; ok=1; fi
  if have_jena; then say "engines: Jena: $(ls "$JAVA_DIR"/jena-tdb2-*.jar 2>/dev/null | head -1 | xargs -r basename)"
  else loud "Jena (libapache-jena-java + a JDK) is not installed: its engine tests will be SKIPPED"; ok=1; fi
  return $ok
}

# --- Virtuoso ------------------------------------------------------------------------------

virtuoso_init() {
  local dir sql=$2 http=$3
  mkdir -p "$1/load" && dir="$(cd "$1" && pwd)"
  cat >"$dir/virtuoso.ini" <<EOF
; Virtuoso for kg: loopback only, one database directory, no plugins, no mDNS, no Unix socket.
[Database]
DatabaseFile       = $dir/virtuoso.db
ErrorLogFile       = $dir/virtuoso.log
LockFile           = $dir/virtuoso.lck
TransactionFile    = $dir/virtuoso.trx
xa_persistent_file = $dir/virtuoso.pxa
ErrorLogLevel      = 7
FileExtend         = 200
Striping           = 0
TempStorage        = TempDatabase

[TempDatabase]
DatabaseFile       = $dir/virtuoso-temp.db
TransactionFile    = $dir/virtuoso-temp.trx
Striping           = 0

[Parameters]
ServerPort               = 127.0.0.1:$sql
DisableUnixSocket        = 1
DisableTcpSocket         = 0
MaxClientConnections     = 10
CheckpointInterval       = 60
CaseMode                 = 2
AllowOSCalls             = 0
DirsAllowed              = ., $dir/load
; 170000 buffers of 8 kB (1.3 GB) and 130000 dirty: Virtuoso's advice for 2 GB of memory
NumberOfBuffers          = 170000
MaxDirtyBuffers          = 130000
MaxQueryMem              = 1G
ThreadsPerQuery          = 2

[HTTPServer]
ServerPort                  = 127.0.0.1:$http
ServerRoot                  = /var/lib/virtuoso-opensource-7/vsp
MaxClientConnections        = 10
EnabledDavVSP               = 0
HTTPProxyEnabled            = 0
ServerThreads               = 10
Charset                     = UTF-8

[SPARQL]
; The stock 10000-row cap cuts answers short without an error: lift it.
ResultSetMaxRows           = 1000000
MaxQueryCostEstimationTime = 0
MaxQueryExecutionTime      = 300
EOF
  say "engines: wrote $dir/virtuoso.ini (SQL 127.0.0.1:$sql, HTTP 127.0.0.1:$http)"
}

ini_value() {  # ini_value DIR SECTION KEY
  awk -v s="[$2]" -v k="$3" '
    /^\[/ { in_s = ($0 == s) }
    in_s && $1 == k { sub(/^[^=]*=[ \t]*/, ""); print; exit }' "$1/virtuoso.ini"
}

isql() {  # isql DIR SQL
  local port
  port="$(ini_value "$1" Parameters ServerPort)"
  isql-vt "$port" dba "${KG_VIRTUOSO_PASSWORD:-dba}" "exec=$2"
}

virtuoso_load() {
  local dir="$1"; shift
  dir="$(cd "$dir" && pwd)"
  local f n=0
  for f in "$@"; do
    # ld_dir reads only from DirsAllowed: link (or copy) each file into DIR/load.
    ln -f "$f" "$dir/load/" 2>/dev/null || cp "$f" "$dir/load/" || return 1
    n=$((n + 1))
  done
  # N-Quads keep their graphs; a triple file goes into the graph named by ld_dir's third
  # argument. rdf_loader_run loads; checkpoint makes it durable.
  local out
  out="$(isql "$dir" "ld_dir('$dir/load', '*', 'urn:kg:default'); rdf_loader_run(); checkpoint; \
select ll_file, ll_error from DB.DBA.load_list where ll_error is not null;")" || { say "$out"; return 1; }
  if printf '%s' "$out" | grep -q '^0 Rows'; then
    say "engines: Virtuoso loaded $n file(s) into $dir"
    rm -f "$dir/load/"*
    return 0
  fi
  say "$out"
  return 1
}

# --- Jena ----------------------------------------------------------------------------------

jena_classpath() {
  # Debian's Jena, with two repairs:
  # - slf4j: /usr/share/java holds every slf4j binding (simple, nop, jdk14, log4j12, maven's);
  #   all of them on one classpath make slf4j pick at random and warn, so take the API and
  #   one binding (simple: messages go to stderr).
  # - xerces: Debian moved Jena's bundled xerces to the package `xerces.*` but left its
  #   message files under org/apache/jena/ext/xerces/, so the first XSD datatype fails with
  #   "internal error" (MissingResourceException); copy them to where the classes look.
  local fix="$CACHE/jena-xerces-messages"
  if [ ! -f "$fix/xerces/impl/msg/XMLSchemaMessages.properties" ]; then
    python3 - "$JAVA_DIR/jena-core.jar" "$fix" <<'PY' || return 1
import sys, zipfile
from pathlib import Path
jar, fix = sys.argv[1], Path(sys.argv[2])
old = "org/apache/jena/ext/xerces/impl/"
with zipfile.ZipFile(jar) as z:
    for name in z.namelist():
        if name.startswith(old) and name.endswith(".properties"):
            target = fix / "xerces" / "impl" / name[len(old):]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(z.read(name))
PY
  fi
  local cp="" jar
  for jar in "$JAVA_DIR"/jena-*.jar; do
    case "$(basename "$jar")" in *-[0-9]*) continue ;; esac  # the unversioned links only
    cp="$cp$jar:"
  done
  for jar in commons-cli commons-codec commons-compress commons-csv commons-io commons-lang3 \
      dexx.collection gson guava httpclient httpcore jackson-core jackson-databind \
      jackson-annotations jsonld-java jakarta.json-api protobuf thrift titanium-json-ld \
      slf4j-api slf4j-simple; do
    [ -f "$JAVA_DIR/$jar.jar" ] && cp="$cp$JAVA_DIR/$jar.jar:"
  done
  printf '%s%s\n' "$cp" "$fix"
}

jena_load() {
  local dir="$1"; shift
  local cp
  cp="$(jena_classpath)" || return 1
  java -Xmx${KG_JENA_HEAP:-2g} -cp "$cp" tdb2.tdbloader --loc "$dir" "$@"
}

jena_serve() {
  local cp
  cp="$(jena_classpath)" || return 1
  exec java -Xmx${KG_JENA_HEAP:-2g} -cp "$cp" "$HERE/jena/KgJenaServer.java" "$1" "$2"
}

case "${1:-}" in
  install) install ;;
  status) status ;;
  virtuoso-init) virtuoso_init "$2" "$3" "$4" ;;
  virtuoso-serve) exec virtuoso-t -f -c "$(cd "$2" && pwd)/virtuoso.ini" ;;
  virtuoso-load) shift; virtuoso_load "$@" ;;
  virtuoso-sql) isql "$2" "$3" ;;
  jena-load) shift; jena_load "$@" ;;
  jena-serve) jena_serve "$2" "$3" ;;
  jena-classpath) jena_classpath ;;
  *) say "usage: $0 install|status|virtuoso-init|virtuoso-serve|virtuoso-load|virtuoso-sql|jena-load|jena-serve|jena-classpath"; exit 2 ;;
esac
