#!/usr/bin/env bash
# Builds ns-2.35 for aqmlab's validation into PREFIX (default /work/ns2-build), on Debian 12 as
# root: Debian's ns-2.35 source (the upstream tarball of the `ns2` source package), Debian's
# otcl 1.14 / tclcl 1.20 / Tcl-Tk 8.6 -dev packages, and this directory's modules/ (CoDel and
# sfqCoDel, written from the published ns-2 modules' behaviour; see README.md). Prints the
# version and the queue classes the binary has. Idempotent: reruns only what is missing.
#
#     bash validation/ns2/build.sh [PREFIX]      # about 15 min on 2 cores
#
# Result: PREFIX/bin/ns; logs in PREFIX/{configure,make}.log. JOBS (default 2) and NICE
# (default 10) set make's parallelism and niceness.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PREFIX="$(mkdir -p "${1:-/work/ns2-build}" && cd "${1:-/work/ns2-build}" && pwd)"
JOBS="${JOBS:-2}"
NICE="${NICE:-10}"
SRC="$PREFIX/src/ns-2.35"
DEPS="$PREFIX/deps"
ARCH_LIB="/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)"

install_packages() {
    local pkgs=(build-essential dpkg-dev xz-utils tcl8.6-dev tk8.6-dev libotcl1-dev libtclcl1-dev
                tclcl libxt-dev libxext-dev libpcap0.8-dev perl)
    if ! dpkg -s "${pkgs[@]}" >/dev/null 2>&1; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${pkgs[@]}"
    fi
}

# apt-get source needs a deb-src line; add one for bookworm main if none is configured.
enable_sources() {
    if ! grep -rqs "deb-src" /etc/apt/sources.list /etc/apt/sources.list.d/; then
        cat > /etc/apt/sources.list.d/ns2-deb-src.sources <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
        apt-get update -qq
    fi
}

# The upstream tarball only: Debian's patch set (its CMake build) is not needed, and the
# snapshot mirrors do not always carry it (apt-get then fails after the tarball has arrived).
fetch_source() {
    [ -d "$SRC" ] && return
    mkdir -p "$PREFIX/src"
    (cd "$PREFIX/src" && { apt-get source --download-only ns2 || true; })
    local tarball
    tarball="$(ls "$PREFIX"/src/ns2_2.35*.orig.tar.* 2>/dev/null | head -1)"
    [ -n "$tarball" ] || { echo "build.sh: apt-get source ns2 brought no ns2_2.35*.orig.tar.*" >&2; exit 1; }
    tar -xf "$tarball" -C "$PREFIX/src"
}

# ns-2's configure looks for each package in one directory tree of its own (include/, lib/,
# generic/, unix/, the script library); Debian spreads them out, so link them together.
link_deps() {
    local p
    for p in tcl tk; do
        mkdir -p "$DEPS/$p/lib"
        ln -sfn "/usr/include/tcl8.6/$p-private/generic" "$DEPS/$p/generic"
        ln -sfn "/usr/include/tcl8.6/$p-private/unix" "$DEPS/$p/unix"
        ln -sf "$ARCH_LIB/lib${p}8.6.so" "$DEPS/$p/lib/"
        ln -sfn "/usr/share/tcltk/${p}8.6" "$DEPS/$p/lib/${p}8.6"
    done
    mkdir -p "$DEPS/otcl/include" "$DEPS/otcl/lib" "$DEPS/tclcl/include" "$DEPS/tclcl/lib"
    ln -sf /usr/include/otcl.h "$DEPS/otcl/include/"
    ln -sf "$ARCH_LIB/libotcl.so" "$DEPS/otcl/lib/libotcl1.14.so"
    ln -sf /usr/include/tclcl/*.h "$DEPS/tclcl/include/"
    ln -sf "$ARCH_LIB/libtclcl.so" "$DEPS/tclcl/lib/"
    ln -sf /usr/bin/tcl2c++ "$DEPS/tclcl/"
}

# Copies modules/*.cc into queue/ as aqmlab-*.cc and lists them in Makefile.in once.
add_modules() {
    local m name objs=""
    for m in "$HERE"/modules/*.cc; do
        name="aqmlab-$(basename "$m" .cc)"
        cp "$m" "$SRC/queue/$name.cc"
        objs="$objs queue/$name.o"
    done
    if ! grep -q "queue/aqmlab-" "$SRC/Makefile.in"; then
        sed -i "s|^\(\tadc/simple-intserv-sched.o queue/red.o\) \\\\|\1$objs \\\\|" "$SRC/Makefile.in"
    fi
    grep -q "queue/aqmlab-" "$SRC/Makefile.in" || { echo "build.sh: could not list the modules in Makefile.in" >&2; exit 1; }
}

configure_ns() {
    [ -f "$SRC/Makefile" ] && [ "$SRC/Makefile" -nt "$SRC/Makefile.in" ] && return
    (cd "$SRC" && ./configure --with-otcl="$DEPS/otcl" --with-tclcl="$DEPS/tclcl" \
        --with-tcl="$DEPS/tcl" --with-tcl-ver=8.6 --with-tk="$DEPS/tk" --with-tk-ver=8.6 \
        --with-tcldebug=no >"$PREFIX/configure.log" 2>&1) \
        || { echo "build.sh: configure failed, see $PREFIX/configure.log" >&2; exit 1; }
}

# configure's -O2 probe fails with this compiler, so the optimisation comes from CCOPT. The 2011
# sources need C++98 and -fpermissive; Tcl 8.6 hides interp->result unless USE_INTERP_RESULT.
compile_ns() {
    local ccopt="-O2 -std=gnu++98 -fpermissive -w -DUSE_INTERP_RESULT"
    (cd "$SRC" && nice -n "$NICE" make -j"$JOBS" CCOPT="$ccopt" ns >"$PREFIX/make.log" 2>&1) \
        || { echo "build.sh: make failed, see $PREFIX/make.log" >&2; tail -20 "$PREFIX/make.log" >&2; exit 1; }
    mkdir -p "$PREFIX/bin"
    # a new file renamed over the old one: runs still using the old binary keep it
    cp "$SRC/ns" "$PREFIX/bin/ns.new"
    mv -f "$PREFIX/bin/ns.new" "$PREFIX/bin/ns"
}

report() {
    "$PREFIX/bin/ns" "$HERE/modules.tcl"
}

install_packages
enable_sources
fetch_source
link_deps
add_modules
configure_ns
compile_ns
report
