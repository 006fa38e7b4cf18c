# The cluster's images, for scripts/kubernetes (sourced; uses its
# variables). No registry is reachable: each image is packed here as a
# docker-archive (manifest.json, a config, uncompressed layer tars),
# streamed into `ctr images import` and tagged with a hash of what went in,
# so that it is built and imported once:
#   - the pause image (the pods' sandboxes): a static C program;
#   - the session image: Debian (the root filesystem scripts/docker-engine
#     makes with debootstrap) plus the pinned CLI's native binary at
#     /usr/local/bin/claude, run as uid 1000, which has no passwd entry
#     (whoever runs it sets HOME).

path_env=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# sha_of prints a file's sha256, cached under its size, mtime and inode:
# the CLI binary and the root filesystem are hundreds of MB.
sha_of() {
	local f=$1 stamp sig h
	stamp="$images/$(basename "$f").sha256"
	sig=$(stat -Lc '%s %Y %i' "$f")
	if [ -f "$stamp" ] && [ "$(sed -n 1p "$stamp")" = "$sig" ]; then
		sed -n 2p "$stamp"
		return
	fi
	h=$(sha256sum <"$f" | cut -c1-64)
	printf '%s\n%s\n' "$sig" "$h" >"$stamp"
	echo "$h"
}

debian_mirror() {
	if [ -n "${CLAUDEOPS_DEBIAN_MIRROR:-}" ]; then
		echo "$CLAUDEOPS_DEBIAN_MIRROR"
		return
	fi
	# The mirror apt already uses here (deb822 sources first, then the
	# one-line format), for it is the one that is reachable.
	local m
	m=$(grep -hE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '$2 !~ /security/ {print $2; exit}') || true
	[ -n "$m" ] || m=$(grep -hE '^deb ' /etc/apt/sources.list 2>/dev/null | awk '$2 !~ /security/ {print $2; exit}') || true
	echo "${m:-http://deb.debian.org/debian}"
}

# debian_rootfs prints the tarball of the Debian root filesystem that
# scripts/docker-engine's session image is made of, made the same way
# (once, shared with it) when missing.
debian_rootfs() {
	local tar="$CACHE/debian-$SUITE-rootfs.tar"
	if [ -s "$tar" ]; then
		echo "$tar"
		return
	fi
	local dir="$images/rootfs" log="$images/debootstrap.log" mirror
	mirror=$(debian_mirror)
	say "building a Debian $SUITE root filesystem with debootstrap from $mirror (once; log: $log)"
	rm -rf "$dir"
	debootstrap --variant=minbase --include=ca-certificates,bash,coreutils,git \
		"$SUITE" "$dir" "$mirror" </dev/null >"$log" 2>&1 || { tail -n 40 "$log" >&2; exit 1; }
	# apt's lists and package cache are of no use in the image.
	rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/*
	# A name of our own while writing: scripts/docker-engine may be
	# making the same file; the rename is atomic either way.
	tar --numeric-owner -C "$dir" -cf "$tar.kube.tmp" . && mv "$tar.kube.tmp" "$tar"
	rm -rf "$dir"
	echo "$tar"
}

# layer_tar OUT SRC:DEST... makes a layer tarball holding each of the
# host's files SRC at DEST (with its parent directories), owned by root,
# with fixed times.
layer_tar() {
	local out=$1 stage c src dest
	shift
	stage=$(mktemp -d "$images/stage.XXXXXX")
	for c in "$@"; do
		src=${c%%:*} dest=${c#*:}
		mkdir -p "$stage/$(dirname "$dest")"
		# A hard link where the file system allows: the CLI is ~200 MB.
		ln "$src" "$stage/$dest" 2>/dev/null || cp "$src" "$stage/$dest"
	done
	find "$stage" -type d -exec chmod 0755 {} +
	tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$stage" -cf "$out" $(cd "$stage" && ls -A)
	rm -rf "$stage"
}

imported() { ctrk images ls -q | grep -xF "docker.io/library/$1" >/dev/null; }

# import_archive NAME CONFIG LAYER... imports into the node's containerd
# the image NAME (repository:tag) of the image config CONFIG (JSON,
# without rootfs, which is added here) and the layer tarballs, and
# removes the other tags of that repository (images of earlier inputs).
import_archive() {
	local name=$1 config=$2 layer diffs="" layers="" i=0 stage old
	shift 2
	stage=$(mktemp -d "$images/archive.XXXXXX")
	for layer in "$@"; do
		diffs+="${diffs:+,}\"sha256:$(sha256sum <"$layer" | cut -c1-64)\""
		layers+="${layers:+,}\"layer$i.tar\""
		ln -s "$layer" "$stage/layer$i.tar"
		i=$((i + 1))
	done
	printf '%s' "${config%\}},\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[$diffs]}}" >"$stage/config.json"
	printf '[{"Config":"config.json","RepoTags":["%s"],"Layers":[%s]}]' "$name" "$layers" >"$stage/manifest.json"
	say "importing $name"
	# Streamed (tar follows the links): no copy of the layers on disk.
	tar -chf - -C "$stage" . | ctrk images import - >"$logs/import.log" 2>&1 ||
		{ cat "$logs/import.log" >&2; rm -rf "$stage"; fail "importing $name failed"; }
	rm -rf "$stage"
	for old in $(ctrk images ls -q | grep -F "docker.io/library/${name%%:*}:" | grep -vxF "docker.io/library/$name"); do
		ctrk images rm "$old" >/dev/null
	done
}

arch() { dpkg --print-architecture 2>/dev/null || go env GOARCH; }

# pause_image prints the name of the pause image, its binary built when
# missing.
pause_image() {
	local src="$tools/pause/pause.c" exe="$images/pause" h
	if [ ! -x "$exe" ] || [ "$src" -nt "$exe" ]; then
		gcc -static -Os -s -o "$exe.tmp" "$src" && mv "$exe.tmp" "$exe"
	fi
	h=$(sha_of "$exe")
	echo "claudeops-test-pause:${h:0:16}"
}

# import_pause imports the pause image when the node's containerd lacks it.
import_pause() {
	local name layer="$images/pause-layer.tar"
	name=$(pause_image)
	imported "$name" && return 0
	layer_tar "$layer" "$images/pause:pause"
	import_archive "$name" \
		"{\"architecture\":\"$(arch)\",\"os\":\"linux\",\"config\":{\"Entrypoint\":[\"/pause\"],\"User\":\"65535:65535\"}}" \
		"$layer"
	rm -f "$layer"
}

# session_inputs checks and makes (once) what the session image is made
# of: the CLI's native binary and Debian's root filesystem.
session_inputs() {
	# The npm package links a native executable: that file alone is the
	# CLI (no Node in the image).
	cli_exe=$(readlink -f "$cli" 2>/dev/null) || true
	if [ -z "$cli_exe" ] || [ ! -x "$cli_exe" ] || [ "$(head -c 4 "$cli_exe" | tr -d '\0')" != $'\x7fELF' ]; then
		fail "the Claude Code CLI at $cli is not a native executable (scripts/test installs it)"
	fi
	rootfs=$(debian_rootfs)
}

# session_image imports Debian plus the CLI (session_inputs) when the
# node's containerd lacks it, and prints its name.
session_image() {
	local cfg layer="$images/claude-layer.tar" name
	cfg="{\"architecture\":\"$(arch)\",\"os\":\"linux\",\"config\":{\"User\":\"1000:1000\",\"Env\":[\"$path_env\"],\"WorkingDir\":\"/\"}}"
	# The layer of the CLI is made the same way from the same file: the
	# inputs' hashes name the image.
	name="claudeops-test-claude-k8s:$(printf '%s %s %s' "$(sha_of "$rootfs")" "$(sha_of "$cli_exe")" "$cfg" |
		sha256sum | cut -c1-16)"
	if ! imported "$name"; then
		layer_tar "$layer" "$cli_exe:usr/local/bin/claude"
		import_archive "$name" "$cfg" "$rootfs" "$layer" >&2
		rm -f "$layer"
	fi
	echo "$name"
}
