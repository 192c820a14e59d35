#!/bin/sh
# run.sh runs the comparison of doc.go: sluice's overload protections
# beside Sentinel-Go's BBR system rule, in one process (about 3 minutes).
#
#   ./run.sh                  the full comparison (the flags below)
#   ./run.sh -load 1,2 ...    any flags of examples/overload instead
#
# When the module proxy cannot serve github.com/alibaba/sentinel-golang at
# the version go.mod requires and SENTINEL_MIRROR names a git clone of it
# (bare or not, with its tag), it first builds a file module proxy of that
# version from the tag, in a temporary directory: the go command itself
# makes the module zip, .info and .mod from the clone (its git origin
# rewritten to SENTINEL_MIRROR, git 2.31 or later), and go.sum's h1 hash
# checks what it made.
set -eu
cd "$(dirname "$0")"
export GOWORK=off
mod=github.com/alibaba/sentinel-golang
ver=$(awk -v m=$mod '$1 == m { print $2 }' go.mod)
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp"; rm -rf "$tmp"' EXIT
if ! go mod download $mod 2>"$tmp/err"; then
	if [ -z "${SENTINEL_MIRROR:-}" ]; then
		cat "$tmp/err" >&2
		echo "run.sh: the module proxy does not serve $mod $ver; set SENTINEL_MIRROR to a git clone of it with tag $ver" >&2
		exit 2
	fi
	mirror=$(cd "$SENTINEL_MIRROR" && pwd)
	echo "run.sh: $mod $ver from the tag in $mirror (the module proxy does not serve it)" >&2
	(cd "$tmp" && GOMODCACHE="$tmp/cache" GOPROXY=direct GOSUMDB=off GIT_ALLOW_PROTOCOL=file \
		GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0="url.file://$mirror.insteadOf" GIT_CONFIG_VALUE_0="https://$mod" \
		go mod download $mod@$ver)
	export GOPROXY="file://$tmp/cache/cache/download,$(go env GOPROXY)"
	export GONOSUMDB="${GONOSUMDB:+$GONOSUMDB,}$mod"
fi
[ $# -gt 0 ] || set -- -backend cpu -service 20ms -warmup 3s -duration 5s -load 1,2,5,10 \
	-slowdown=false -priority=false -protect none,adaptive,system,system-always,sentinel-bbr
echo "sluice $(git log -1 --format='%h %cs' 2>/dev/null || echo '(no git)'), $mod $ver; flags: $*"
go run . "$@"
