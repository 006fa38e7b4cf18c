// Package kubetest gives tests a real single-node Kubernetes cluster: the
// one scripts/kubernetes starts on loopback (etcd, kube-apiserver,
// kube-scheduler and a kubelet on a containerd of its own) with the session
// image in it (Debian plus the pinned CLI at /usr/local/bin/claude, run as
// uid 1000, with no passwd entry: set HOME; pods use imagePullPolicy
// Never, there is no registry).
//
// The cluster has no kube-controller-manager, so the parts of a real
// cluster it would provide are made here, per test: a namespace's default
// ServiceAccount and kube-root-ca.crt, the namespace's removal, and the
// binding of a claim to its volume (HostPathClaim).
//
// scripts/test starts the cluster and sets CLAUDEOPS_TEST_KUBECONFIG,
// CLAUDEOPS_TEST_KUBE_IMAGE, CLAUDEOPS_TEST_KUBE_NODE and
// CLAUDEOPS_REQUIRE_KUBERNETES=1, or, where no cluster can run,
// CLAUDEOPS_KUBERNETES_UNAVAILABLE with the reason.
//
// Files: kubetest.go (Cluster, Require: skipped, saying why, where none
// can run; failed where scripts/test requires it), namespace.go (a
// namespace per test, made and removed), claim.go (host-path claims bound
// by hand), serviceaccount.go (ServiceAccount kubeconfigs with exactly a
// Role's rules).
package kubetest
