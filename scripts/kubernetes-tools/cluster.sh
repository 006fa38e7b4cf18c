# Starting and stopping the cluster, for scripts/kubernetes (sourced; uses
# its variables and helpers). Every process is ours: a containerd on its
# own socket, etcd, kube-apiserver, kube-scheduler and a kubelet, on
# 127.0.0.1 at ports chosen free, with their state under $run.

ctrk() { ctr --address "$sock" -n k8s.io "$@"; }

# api METHOD PATH [JSON] calls the API server as the admin. (Not as
# "curl": the API server indents its JSON for curl.)
api() {
	curl -sS --max-time 10 -A scripts/kubernetes --cacert "$pki/ca.crt" -H "Authorization: Bearer $(cat "$run/admin.token")" \
		-H 'Content-Type: application/json' -X "$1" "https://127.0.0.1:$API_PORT$2" ${3:+--data "$3"}
}

# make_pki makes (once) the cluster's CA, the API server's serving and
# kubelet-client certificates, and the service accounts' signing key.
make_pki() {
	[ -s "$pki/sa.pub" ] && return 0
	local tmp="$pki.tmp" ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
	rm -rf "$tmp"
	mkdir -m 700 -p "$tmp"
	(
		cd "$tmp"
		openssl req -x509 "${ec[@]}" -keyout ca.key -out ca.crt -days 3650 -subj /CN=claudeops-test-kubernetes-ca \
			-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign,digitalSignature
		# cert NAME CN EXTENSIONS
		cert() {
			openssl req -new "${ec[@]}" -keyout "$1.key" -subj "/CN=$2" |
				openssl x509 -req -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 -out "$1.crt" \
					-extfile <(printf '%s\n' basicConstraints=critical,CA:FALSE keyUsage=critical,digitalSignature "$3")
		}
		cert apiserver kube-apiserver "subjectAltName=IP:127.0.0.1,DNS:localhost,IP:10.96.0.1,DNS:kubernetes,\
DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local
extendedKeyUsage=serverAuth"
		cert kubelet-client kube-apiserver-kubelet-client extendedKeyUsage=clientAuth
		openssl genrsa -out sa.key 2048
		openssl rsa -in sa.key -pubout -out sa.pub
	) >"$logs/pki.log" 2>&1 || { cat "$logs/pki.log" >&2; fail "making the cluster's keys failed"; }
	rm -rf "$pki"
	mv "$tmp" "$pki"
}

# pick_ports VAR... sets each VAR to a distinct TCP port no socket uses,
# below the ephemeral range (so no outgoing connection takes it meanwhile).
pick_ports() {
	local used n p hex
	used=" $(awk 'FNR > 1 {split($2, a, ":"); print a[2]}' /proc/net/tcp /proc/net/tcp6 2>/dev/null | sort -u | tr '\n' ' ') "
	for n in "$@"; do
		while :; do
			p=$((20000 + RANDOM % 12000))
			hex=$(printf '%04X' "$p")
			[[ $used == *" $hex "* ]] && continue
			used+="$hex "
			printf -v "$n" %d "$p"
			break
		done
	done
}

# kubeconfig FILE USER TOKEN writes a kubeconfig for the API server.
kubeconfig() {
	cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: claudeops-test
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority-data: $(base64 -w0 <"$pki/ca.crt")
users:
- name: $2
  user:
    token: $3
contexts:
- name: $2
  context: {cluster: claudeops-test, user: $2}
current-context: $2
EOF
	chmod 600 "$1"
}

write_containerd_config() {
	cat >"$run/containerd.toml" <<EOF
version = 2
root = "$state/containerd"
state = "$run/containerd"
# No snapshotter but overlayfs, no /opt/containerd. (The v1 runtime stays:
# containerd 1.6's task service, and with it the CRI, needs it loaded.)
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.internal.v1.opt", "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = "$sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "docker.io/library/$PAUSE_IMAGE"
  # No CAP_SYS_RESOURCE in some sandboxes: without this every pod sandbox
  # fails ("can't get final child's PID from pipe").
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  # Network namespaces under our state, so that stop finds what is left.
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$run/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$run/cni"
EOF
	# A bridge of our own with host-local addresses; no masquerading, so
	# no iptables rule outlives the cluster.
	cat >"$run/cni/10-claudeops.conflist" <<EOF
{"cniVersion": "1.0.0", "name": "$cninet", "plugins": [{"type": "bridge", "bridge": "$bridge",
 "isGateway": true, "ipMasq": false, "hairpinMode": true,
 "ipam": {"type": "host-local", "ranges": [[{"subnet": "$subnet"}]], "dataDir": "$run/cni-ipam"}}]}
EOF
}

write_kubelet_config() {
	cat >"$run/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: $KUBELET_PORT
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
readOnlyPort: 0
containerRuntimeEndpoint: unix://$sock
podLogsDir: $run/pod-logs
volumePluginDir: $run/kubelet-plugins
# The API server is the one client: it proves itself with a certificate
# of our CA.
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $pki/ca.crt}
authorization: {mode: AlwaysAllow}
# What this sandbox needs (cgroup v1, no systemd, maybe swap).
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /$cgroot
failSwapOn: false
resolvConf: /etc/resolv.conf
# The images come from no registry: never collect them, and evict only
# when the machine is really out of room.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, nodefs.inodesFree: 1%, imagefs.available: 1%}
EOF
}

# cgroup_mounts prints the mount point of each cgroup hierarchy.
cgroup_mounts() {
	awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) ~ /^cgroup2?$/) print $5; break } }' /proc/self/mountinfo
}

# make_cgroup_root makes the kubelet's cgroup root in every hierarchy (it
# must exist), with the CPUs and memory nodes of the machine's.
make_cgroup_root() {
	local m
	for m in $(cgroup_mounts); do
		mkdir -p "$m/$cgroot"
		if [ -f "$m/cpuset.cpus" ] && [ -z "$(cat "$m/$cgroot/cpuset.cpus")" ]; then
			cat "$m/cpuset.cpus" >"$m/$cgroot/cpuset.cpus"
			cat "$m/cpuset.mems" >"$m/$cgroot/cpuset.mems"
		fi
	done
}

write_configs() {
	local admin node sched
	mkdir -p "$run"/{pids,containerd,cni,cni-ipam,kubelet,kubelet-plugins,pod-logs,apiserver}
	mkdir -m 700 "$run/etcd"
	chmod 700 "$run"
	pick_ports API_PORT ETCD_PORT ETCD_PEER_PORT KUBELET_PORT KUBELET_HEALTHZ_PORT
	declare -p API_PORT ETCD_PORT ETCD_PEER_PORT KUBELET_PORT KUBELET_HEALTHZ_PORT |
		sed 's/^declare -- //' >"$run/ports"
	admin=$(openssl rand -hex 24) node=$(openssl rand -hex 24) sched=$(openssl rand -hex 24)
	printf '%s\n' "$admin" >"$run/admin.token"
	printf '%s\n' "$admin,admin,admin,system:masters" "$node,system:node:$NODE,node:$NODE,system:nodes" \
		"$sched,system:kube-scheduler,kube-scheduler" >"$run/tokens.csv"
	kubeconfig "$run/admin.kubeconfig" admin "$admin"
	kubeconfig "$run/kubelet.kubeconfig" "system:node:$NODE" "$node"
	kubeconfig "$run/scheduler.kubeconfig" system:kube-scheduler "$sched"
	PAUSE_IMAGE=$(pause_image)
	write_containerd_config
	write_kubelet_config
	make_cgroup_root
}

# wait_until WHAT NAME SECONDS CMD... runs CMD until it succeeds. When
# NAME (a daemon of ours) ends or time is up, showing NAME's log, it says
# the cluster cannot start on this machine (the tests then skip, saying
# why): built and configured as here, that is the machine's doing (its
# kernel, cgroups, mounts), as the issue that asked for the cluster allows.
wait_until() {
	local what=$1 name=$2 limit=$((SECONDS + $3)) last
	shift 3
	until "$@" >/dev/null 2>&1; do
		if ! ours "$name" >/dev/null; then
			tail -n 30 "$logs/$name.log" >&2
			last=$({ grep -iE 'error|fail' "$logs/$name.log" || true; } | tail -n 1 | cut -c1-300)
			cannot_run "$name exited before $what (log: $logs/$name.log): $last"
		fi
		if [ "$SECONDS" -ge "$limit" ]; then
			tail -n 30 "$logs/$name.log" >&2
			cannot_run "no $what after $START_TIMEOUT s (logs: $logs/*.log)"
		fi
		sleep 0.3
	done
}

# default_account makes the default namespace's default ServiceAccount
# (no controller does here), once the namespace is there.
default_account() {
	api POST /api/v1/namespaces/default/serviceaccounts '{"metadata":{"name":"default"}}' |
		grep -E '"kind":"ServiceAccount"|"reason":"AlreadyExists"' >/dev/null
}

# (No grep -q after a pipe in these scripts: with pipefail, the writer's
# SIGPIPE when grep stops early would fail the pipeline.)
node_ready() { api GET "/api/v1/nodes/$NODE" | grep -F '"type":"Ready","status":"True"' >/dev/null; }
api_ready() { [ "$(api GET /readyz)" = ok ]; }

start_daemons() {
	local deadline=$1
	daemon containerd containerd --config "$run/containerd.toml"
	daemon etcd "$bin/etcd" --name claudeops-test --data-dir "$run/etcd" --log-level warn \
		--listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
		--listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
		--initial-cluster "claudeops-test=http://127.0.0.1:$ETCD_PEER_PORT" --unsafe-no-fsync
	daemon kube-apiserver "$bin/kube-apiserver" --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
		--bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$API_PORT" \
		--endpoint-reconciler-type none --cert-dir "$run/apiserver" \
		--tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
		--token-auth-file "$run/tokens.csv" --authorization-mode Node,RBAC \
		--service-account-issuer https://kubernetes.default.svc.cluster.local \
		--service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
		--service-cluster-ip-range 10.96.0.0/16 --kubelet-preferred-address-types Hostname \
		--kubelet-client-certificate "$pki/kubelet-client.crt" --kubelet-client-key "$pki/kubelet-client.key" \
		--disable-admission-plugins TaintNodesByCondition,StorageObjectInUseProtection --profiling=false
	wait_until "containerd socket" containerd $((deadline - SECONDS)) ctr --address "$sock" version
	daemon kubelet "$bin/kubelet" --config "$run/kubelet.yaml" --kubeconfig "$run/kubelet.kubeconfig" \
		--root-dir "$run/kubelet" --cert-dir "$run/kubelet/pki" --hostname-override "$NODE"
	# No endpoint of the scheduler's own (port 0): nothing reads it.
	daemon kube-scheduler "$bin/kube-scheduler" --kubeconfig "$run/scheduler.kubeconfig" --leader-elect=false \
		--secure-port 0 --profiling=false
}

start_cluster() {
	local deadline=$((SECONDS + START_TIMEOUT)) image n
	make_pki
	write_configs
	start_daemons "$deadline"
	import_pause
	# The session image goes in while the node comes up.
	image=$(session_image)
	wait_until "API server" kube-apiserver $((deadline - SECONDS)) api_ready
	wait_until "default ServiceAccount" kube-apiserver $((deadline - SECONDS)) default_account
	wait_until "Ready node $NODE" kubelet $((deadline - SECONDS)) node_ready
	for n in etcd kube-scheduler containerd; do ours "$n" >/dev/null || fail "$n exited (log: $logs/$n.log)"; done
	printf '%s\n' "CLAUDEOPS_TEST_KUBECONFIG=$run/admin.kubeconfig" "CLAUDEOPS_TEST_KUBE_IMAGE=$image" \
		"CLAUDEOPS_TEST_KUBE_NODE=$NODE" >"$run/cluster.env"
}

# cluster_answers tells whether the cluster this script started still runs
# whole and answers.
cluster_answers() {
	local n
	for n in containerd etcd kube-apiserver kube-scheduler kubelet; do ours "$n" >/dev/null || return 1; done
	# shellcheck source=/dev/null
	. "$run/ports"
	api_ready && node_ready
}
