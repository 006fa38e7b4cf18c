# Stopping the cluster, for scripts/kubernetes (sourced; uses its
# variables and helpers). What a cluster leaves when its processes are
# simply ended: the pods' containers and their shims (containerd keeps
# them running without it), the kubelet's mounts (volumes, subpaths),
# containerd's (root filesystems, sandboxes' /dev/shm, network
# namespaces), the pods' cgroups, the bridge, the CNI plugins' cache, the
# kubelet's log links. stop_cluster removes all of it, in an order that lets each part
# tear down what it made, with forcible fallbacks; it also cleans up after
# a run that ended without stopping.

# drain_pods deletes every pod and waits (bounded) until the kubelet has
# torn each down: containers stopped, sandbox network removed, volumes
# unmounted.
drain_pods() {
	local ns limit=$((SECONDS + 30))
	for ns in $(api GET /api/v1/namespaces | grep -o '"metadata":{"name":"[^"]*"' | cut -d'"' -f6); do
		api DELETE "/api/v1/namespaces/$ns/pods?gracePeriodSeconds=1" >/dev/null || true
	done
	while pods_left; do
		[ "$SECONDS" -lt "$limit" ] || { say "pods still terminating after 30 s: removing them by force"; return 0; }
		sleep 0.5
	done
}

pods_left() {
	local r
	r=$(api GET '/api/v1/pods?limit=1') || return 1
	[[ $r == *'"items":['* && $r != *'"items":[]'* ]]
}

# clear_containers ends every task of the node's containerd and removes
# every container (their snapshots with them).
clear_containers() {
	local t c
	for t in $(ctrk tasks ls -q 2>/dev/null); do ctrk tasks kill -a -s SIGKILL "$t" >/dev/null 2>&1 || true; done
	for _ in $(seq 1 50); do
		[ -z "$(ctrk tasks ls 2>/dev/null | awk 'NR > 1 && $3 != "STOPPED"')" ] && break
		sleep 0.2
	done
	for t in $(ctrk tasks ls -q 2>/dev/null); do ctrk tasks rm -f "$t" >/dev/null 2>&1 || true; done
	for c in $(ctrk containers ls -q 2>/dev/null); do ctrk containers rm "$c" >/dev/null 2>&1 || true; done
}

# our_shims prints the pids of the shims of our containerd: each names
# its socket.
our_shims() {
	local f
	for f in $(grep -lzxF -- "$sock" /proc/[0-9]*/cmdline 2>/dev/null); do
		[[ $(tr '\0' ' ' <"$f" 2>/dev/null) == *containerd-shim* ]] && basename "$(dirname "$f")"
	done
	return 0
}

# end_containerd stops our containerd once its tasks are gone; one that
# is not running while tasks of it remain (their bundles) is started
# again for that: it finds their shims from the bundles.
end_containerd() {
	local sp ip c
	if ! ours containerd >/dev/null && [ -f "$run/containerd.toml" ] &&
		compgen -G "$run/containerd/io.containerd.runtime.v2.task/*/*" >/dev/null; then
		say "a containerd of ours left tasks: starting it to end them"
		daemon containerd-cleanup containerd --config "$run/containerd.toml"
		mv "$run/pids/containerd-cleanup" "$run/pids/containerd"
		for _ in $(seq 1 100); do
			ctr --address "$sock" version >/dev/null 2>&1 && break
			sleep 0.1
		done
	fi
	local ids=""
	if ours containerd >/dev/null; then
		ids=$(ctrk containers ls -q 2>/dev/null || true)
		clear_containers
	fi
	halt containerd
	# The CNI plugins' cache of the pods' loopback (our own network's
	# goes by its name below): what CNI DEL would have removed.
	for c in $ids; do rm -f "/var/lib/cni/results/cni-loopback-$c-lo"; done
	# Shims that outlived all that, and what runs under them (a
	# container's init; the rest of its pid namespace goes with it).
	for sp in $(our_shims); do
		for ip in $(ps -o pid= --ppid "$sp"); do kill -KILL "$ip" 2>/dev/null || true; done
		kill -KILL "$sp" 2>/dev/null || true
	done
}

# mounts_below DIR prints the mount points at or below DIR, deepest first.
mounts_below() {
	awk -v d="$1" '{ m = $5; gsub(/\\040/, " ", m); if (m == d || index(m, d "/") == 1) print length(m) " " m }' \
		/proc/self/mountinfo | sort -rn | cut -d' ' -f2-
}

unmount_below() {
	local d m
	[ -d "$1" ] || return 0
	d=$(readlink -f "$1")
	for _ in 1 2 3; do # mounts may be stacked
		[ -n "$(mounts_below "$d")" ] || return 0
		while IFS= read -r m; do
			umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
		done < <(mounts_below "$d")
	done
}

stop_cluster() {
	[ -d "$run" ] || return 0
	local n m
	if [ -f "$run/ports" ]; then
		# shellcheck source=/dev/null
		. "$run/ports"
		if ours kubelet >/dev/null && ours kube-apiserver >/dev/null && api_ready; then
			drain_pods
		fi
	fi
	for n in kubelet kube-scheduler kube-apiserver etcd; do halt "$n"; done
	end_containerd
	unmount_below "$run"
	unmount_below "$state/containerd"
	# The tasks' work directories, left by tasks that were never deleted
	# (never removed through a mount: see below).
	if [ -z "$(mounts_below "$(readlink -f "$state/containerd")")" ]; then
		rm -rf "$state"/containerd/io.containerd.runtime.v2.task/*/*
	fi
	# The kubelet's cgroups, empty by now (rmdir removes no other).
	for m in $(cgroup_mounts); do
		[ ! -d "$m/$cgroot" ] || find "$m/$cgroot" -depth -type d -exec rmdir {} + 2>/dev/null || true
	done
	ip link delete "$bridge" 2>/dev/null || true
	rm -f /var/lib/cni/results/"$cninet"-*
	local l
	for l in /var/log/containers/*.log; do
		[ -L "$l" ] && [[ $(readlink "$l") == "$run/"* ]] && rm -f "$l"
	done
	# Never remove through a mount: it could be a volume's host directory.
	if [ -n "$(mounts_below "$(readlink -f "$run")")" ]; then
		fail "mounts below $run remain: $(mounts_below "$(readlink -f "$run")" | tr '\n' ' ')"
	fi
	rm -rf "$run"
}
