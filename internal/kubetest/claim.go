package kubetest

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// HostPathClaim makes the PersistentVolumeClaim name in ns, bound to a
// PersistentVolume of type hostPath at hostDir (a directory of this host,
// the node). With no controller to bind them, both are marked Bound here
// (through their status), as the kubelet mounts only a bound claim. The
// volume goes with the namespace when Namespace made ns, else at the
// test's cleanup, with the claim.
func (c *Cluster) HostPathClaim(t testing.TB, ns, name, hostDir string) {
	t.Helper()
	ctx, cancel := stepContext()
	defer cancel()
	pvName := ns + "-" + name
	c.mu.Lock()
	_, ours := c.pvs[ns]
	if ours {
		c.pvs[ns] = append(c.pvs[ns], pvName)
	}
	c.mu.Unlock()
	if !ours {
		t.Cleanup(func() { c.removeClaim(t, ns, name, pvName) })
	}
	size := resource.MustParse("1Gi")
	modes := []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	empty := ""
	pvc := &corev1.PersistentVolumeClaim{
		// As the binding controller marks a claim it bound: the
		// scheduler takes a claim without this for one still to bind.
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{
			"pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes"}},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      modes,
			StorageClassName: &empty,
			VolumeName:       pvName,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
		},
	}
	pvc, err := c.client.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metaCreate)
	if err != nil {
		t.Fatalf("kubetest: create claim %s/%s: %v", ns, name, err)
	}
	hostPathType := corev1.HostPathDirectory
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: pvName, Labels: map[string]string{"claudeops.test/kubetest": "1"}},
		Spec: corev1.PersistentVolumeSpec{
			AccessModes:                   modes,
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              "",
			// The kubelet checks the claim's uid here, not just its name.
			ClaimRef:               &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: ns, Name: name, UID: pvc.UID},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: hostDir, Type: &hostPathType}},
		},
	}
	if pv, err = c.client.CoreV1().PersistentVolumes().Create(ctx, pv, metaCreate); err != nil {
		t.Fatalf("kubetest: create volume %s: %v", pvName, err)
	}
	pv.Status.Phase = corev1.VolumeBound
	if _, err := c.client.CoreV1().PersistentVolumes().UpdateStatus(ctx, pv, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("kubetest: mark volume %s bound: %v", pvName, err)
	}
	pvc.Status.Phase = corev1.ClaimBound
	pvc.Status.AccessModes = modes
	pvc.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: size}
	if _, err := c.client.CoreV1().PersistentVolumeClaims(ns).UpdateStatus(ctx, pvc, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("kubetest: mark claim %s/%s bound: %v", ns, name, err)
	}
}

// removeClaim deletes a claim made in a namespace Namespace did not make,
// and its volume.
func (c *Cluster) removeClaim(t testing.TB, ns, name, pvName string) {
	ctx, cancel := stepContext()
	defer cancel()
	if err := c.client.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("kubetest: delete claim %s/%s: %v", ns, name, err)
	}
	if err := c.client.CoreV1().PersistentVolumes().Delete(ctx, pvName, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("kubetest: delete volume %s: %v", pvName, err)
	}
}
